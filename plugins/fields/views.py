"""/api/field endpoints (the saved-questions field values belong to the cards plugin)."""
from core.appdb import db
from core.http import auth
from core.http.api import Api

from . import service
from .schemas import (
    EditableQuery,
    FieldId,
    FieldUpdate,
    NewDimension,
    NewValues,
    RemappingPath,
    SearchPath,
    SearchQuery,
    ValueQuery,
)

field_api = Api("field", __name__, url_prefix="/field")


@field_api.get("/<id>", path=FieldId, query=EditableQuery)
def get_field(path: FieldId, query: EditableQuery):
    """One field with its table, FK target and dimensions."""
    return service.get_field(db.session(), auth.tessera(), auth.require_user(), path.id)


@field_api.put("/<id>", path=FieldId, body=FieldUpdate)
def update_field(path: FieldId, body: FieldUpdate):
    """Change a field's names, types, visibility, values setting or FK target."""
    return service.update_field(db.session(), auth.tessera(), auth.require_user(), path.id,
                                body.model_dump(include=body.model_fields_set))


@field_api.get("/<id>/related", path=FieldId)
def related(path: FieldId):
    """The field's table, segments and metrics using it, and other fields of the table."""
    return service.related(db.session(), auth.require_user(), path.id)


@field_api.get("/<id>/summary", path=FieldId)
def summary(path: FieldId):
    """[["count", rows], ["distincts", distinct values]], counted by the database."""
    return service.summary(db.session(), auth.require_user(), path.id)


@field_api.get("/<id>/values", path=FieldId)
def values(path: FieldId):
    """Stored values of a list field, paired with their human-readable names when remapped."""
    return service.values(db.session(), auth.require_user(), path.id)


@field_api.post("/<id>/values", path=FieldId, body=NewValues)
def update_values(path: FieldId, body: NewValues):
    """Set the values' human-readable names."""
    return service.update_values(db.session(), auth.require_user(), path.id, body.values)


@field_api.post("/<id>/rescan_values", path=FieldId)
def rescan_values(path: FieldId):
    """Re-read the field's values from its database now."""
    return service.rescan_values(db.session(), auth.tessera(), auth.require_user(), path.id)


@field_api.post("/<id>/discard_values", path=FieldId)
def discard_values(path: FieldId):
    """Forget the field's stored values."""
    return service.discard_values(db.session(), auth.require_user(), path.id)


@field_api.post("/<id>/dimension", path=FieldId, body=NewDimension)
def set_dimension(path: FieldId, body: NewDimension):
    """Remap the field: internal (its values renamed) or external (shown as another field)."""
    return service.set_dimension(db.session(), auth.require_user(), path.id, body.type, body.name,
                                 body.human_readable_field_id)


@field_api.delete("/<id>/dimension", path=FieldId, status=204)
def delete_dimension(path: FieldId):
    """Remove the field's remapping."""
    service.delete_dimension(db.session(), auth.require_user(), path.id)


@field_api.get("/<id>/search/<search_id>", path=SearchPath, query=SearchQuery)
def search(path: SearchPath, query: SearchQuery):
    """Values whose search field starts with `value`."""
    return service.search(db.session(), auth.require_user(), path.id, path.search_id, query.value, query.limit)


@field_api.get("/<id>/remapping/<remapped_id>", path=RemappingPath, query=ValueQuery)
def remapping(path: RemappingPath, query: ValueQuery):
    """The remapped value of one value."""
    return service.remapping(db.session(), auth.require_user(), path.id, path.remapped_id, query.value)
