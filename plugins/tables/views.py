"""/api/table endpoints (virtual card__ tables belong to the cards plugin)."""
from core.appdb import db
from core.http import auth
from core.http.api import Api

from . import service
from .schemas import (
    EditableQuery,
    FieldOrderBody,
    QueryMetadataQuery,
    TableId,
    TablesUpdate,
    TableUpdate,
)

table_api = Api("table", __name__, url_prefix="/table")


@table_api.get("/")
def list_tables():
    """Every active table the caller may read, each with its database."""
    return service.list_tables(db.session(), auth.tessera(), auth.require_user())


@table_api.put("/", body=TablesUpdate)
def update_tables(body: TablesUpdate):
    """Apply the same changes to several tables at once."""
    changes = body.model_dump(include=body.model_fields_set - {"ids"})
    return service.update_tables(db.session(), auth.require_user(), body.ids, changes)


@table_api.get("/<id>", path=TableId, query=EditableQuery)
def get_table(path: TableId, query: EditableQuery):
    """One table with its database and primary-key field."""
    return service.get_table(db.session(), auth.tessera(), auth.require_user(), path.id,
                             bool(query.include_editable_data_model))


@table_api.put("/<id>", path=TableId, body=TableUpdate)
def update_table(path: TableId, body: TableUpdate):
    """Change a table's display name, description, visibility, entity type or field order."""
    return service.update_table(db.session(), auth.require_user(), path.id, body.model_dump(include=body.model_fields_set))


@table_api.get("/<id>/query_metadata", path=TableId, query=QueryMetadataQuery)
def query_metadata(path: TableId, query: QueryMetadataQuery):
    """The table with its database, fields, FK targets and dimensions."""
    return service.query_metadata(db.session(), auth.tessera(), auth.require_user(), path.id,
                                  bool(query.include_sensitive_fields), bool(query.include_hidden_fields),
                                  bool(query.include_editable_data_model))


@table_api.get("/<id>/fks", path=TableId)
def fks(path: TableId):
    """Foreign keys elsewhere that point at this table."""
    return service.fks(db.session(), auth.require_user(), path.id)


@table_api.get("/<id>/related", path=TableId)
def related(path: TableId):
    """Segments, metrics, tables linked to this one both ways, other tables of its schema."""
    return service.related(db.session(), auth.require_user(), path.id)


@table_api.put("/<id>/fields/order", path=TableId, body=FieldOrderBody)
def reorder_fields(path: TableId, body: FieldOrderBody):
    """Order the table's fields as the list of ids says."""
    return service.reorder_fields(db.session(), auth.require_user(), path.id, body.root)


@table_api.post("/<id>/discard_values", path=TableId)
def discard_values(path: TableId):
    """Forget the stored values of the table's fields."""
    return service.discard_values(db.session(), auth.require_user(), path.id)


@table_api.post("/<id>/rescan_values", path=TableId)
def rescan_values(path: TableId):
    """Re-read the values of the table's list fields in the background."""
    return service.rescan_values(db.session(), auth.require_user(), path.id)
