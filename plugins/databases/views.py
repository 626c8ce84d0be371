"""/api/database endpoints (saved-questions virtual database, card autocomplete and model
persistence belong to the cards plugin)."""
from core.appdb import db
from core.http import auth
from core.http.api import Api

from . import service
from .schemas import (
    AutocompleteQuery,
    DatabaseId,
    DatabaseUpdate,
    DeleteQuery,
    EditableQuery,
    GetQuery,
    ListQuery,
    MetadataQuery,
    NewDatabase,
    SchemaPath,
    SchemaQuery,
    Validate,
)

database_api = Api("database", __name__, url_prefix="/database")


@database_api.get("/", query=ListQuery)
def list_databases(query: ListQuery):
    """Databases the caller may see, as {"data": [...], "total": n}."""
    return service.list_databases(db.session(), auth.tessera(), auth.require_user(), query.include == "tables",
                                  bool(query.include_editable_data_model), bool(query.exclude_uneditable_details),
                                  bool(query.include_only_uploadable), bool(query.include_analytics))


@database_api.post("/", body=NewDatabase, auth="superuser")
def create_database(body: NewDatabase):
    """Register a database; its sync starts in the background."""
    return service.create_database(db.session(), auth.tessera(), auth.require_user(), body)


@database_api.post("/sample_database", auth="superuser")
def sample_database():
    """Register the Sample Database (once)."""
    return service.add_sample_database(db.session(), auth.tessera(), auth.require_user())


@database_api.post("/validate", body=Validate, auth="superuser")
def validate(body: Validate):
    """Whether a connection can be made with these details."""
    return service.validate(auth.tessera(), body.engine, body.details)


@database_api.get("/<id>", path=DatabaseId, query=GetQuery)
def get_database(path: DatabaseId, query: GetQuery):
    """One database, optionally with its tables (and their fields)."""
    return service.get_database(db.session(), auth.tessera(), auth.require_user(), path.id, query.include,
                                bool(query.include_editable_data_model), bool(query.exclude_uneditable_details))


@database_api.put("/<id>", path=DatabaseId, body=DatabaseUpdate)
def update_database(path: DatabaseId, body: DatabaseUpdate):
    """Change a database; new details are checked by connecting."""
    return service.update_database(db.session(), auth.tessera(), auth.require_user(), path.id, body)


@database_api.delete("/<id>", path=DatabaseId, query=DeleteQuery, auth="superuser", status=204)
def delete_database(path: DatabaseId, query: DeleteQuery):
    """Remove a database with its tables, fields and values."""
    service.delete_database(db.session(), auth.require_user(), path.id)


@database_api.get("/<id>/metadata", path=DatabaseId, query=MetadataQuery)
def metadata(path: DatabaseId, query: MetadataQuery):
    """The database with its tables and their fields."""
    return service.metadata(db.session(), auth.tessera(), auth.require_user(), path.id, bool(query.include_hidden),
                            bool(query.remove_inactive), bool(query.skip_fields), bool(query.include_editable_data_model))


@database_api.get("/<id>/fields", path=DatabaseId)
def fields(path: DatabaseId):
    """Every visible field of the database, with its table's names."""
    return service.fields(db.session(), auth.require_user(), path.id)


@database_api.get("/<id>/idfields", path=DatabaseId, query=EditableQuery)
def idfields(path: DatabaseId, query: EditableQuery):
    """The primary-key fields of the database, each with its table."""
    return service.idfields(db.session(), auth.require_user(), path.id, bool(query.include_editable_data_model))


@database_api.get("/<id>/autocomplete_suggestions", path=DatabaseId, query=AutocompleteQuery)
def autocomplete_suggestions(path: DatabaseId, query: AutocompleteQuery):
    """Table and field names matching a prefix or substring, for the SQL editor."""
    return service.autocomplete(db.session(), auth.require_user(), path.id, query.prefix, query.substring)


@database_api.get("/<id>/schemas", path=DatabaseId, query=SchemaQuery)
def schemas(path: DatabaseId, query: SchemaQuery):
    """Names of the schemas that hold visible tables ("" for tables without one)."""
    return service.schemas(db.session(), auth.require_user(), path.id, bool(query.include_hidden),
                           bool(query.include_editable_data_model))


@database_api.get("/<id>/schema", path=DatabaseId, query=SchemaQuery)
def schema_without_name(path: DatabaseId, query: SchemaQuery):
    """Tables whose schema is null or empty."""
    return service.schema_tables(db.session(), auth.require_user(), path.id, None, bool(query.include_hidden),
                                 bool(query.include_editable_data_model))


@database_api.get("/<id>/schema/<schema_name>", path=SchemaPath, query=SchemaQuery)
def schema_tables(path: SchemaPath, query: SchemaQuery):
    """Tables of one schema."""
    return service.schema_tables(db.session(), auth.require_user(), path.id, path.schema_name,
                                 bool(query.include_hidden), bool(query.include_editable_data_model))


@database_api.get("/<id>/syncable_schemas", path=DatabaseId)
def syncable_schemas(path: DatabaseId):
    """Schemas sync would read, asked of the database itself."""
    return service.syncable_schemas(db.session(), auth.require_user(), path.id)


@database_api.get("/<id>/usage_info", path=DatabaseId, auth="superuser")
def usage_info(path: DatabaseId):
    """How many questions, models, metrics and segments use the database."""
    return service.usage_info(db.session(), path.id)


@database_api.post("/<id>/sync_schema", path=DatabaseId)
def sync_schema(path: DatabaseId):
    """Start a schema sync in the background."""
    return service.sync_schema(db.session(), auth.require_user(), path.id)


@database_api.post("/<id>/rescan_values", path=DatabaseId)
def rescan_values(path: DatabaseId):
    """Start a field-values scan in the background."""
    return service.rescan_values(db.session(), auth.require_user(), path.id)


@database_api.post("/<id>/discard_values", path=DatabaseId)
def discard_values(path: DatabaseId):
    """Forget the stored field values of every field of the database."""
    return service.discard_values(db.session(), auth.require_user(), path.id)


@database_api.post("/<id>/dismiss_spinner", path=DatabaseId)
def dismiss_spinner(path: DatabaseId):
    """Mark the database and its tables as synced."""
    return service.dismiss_spinner(db.session(), auth.require_user(), path.id)
