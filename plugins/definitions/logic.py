"""The endpoints' logic shared by segments and legacy metrics (/api/segment, /api/metric): listing,
reading, creating, changing and archiving one of them, its revisions and reverting.

Both are definitions on one table with the same lifecycle in Metabase (the same checks, the same
revision rules), so both services call these with their model class; only their event names and
a few columns differ. Writes are for administrators (the endpoints declare it); reading one needs
data-model permission on its table (Metabase v0.50+'s can-read?: manage-table-metadata), while
table metadata lists a table's segments to everyone who sees the table, as Metabase's hydration. Every change records a revision in the same transaction (`push`: an
unchanged object records none), with the PUT's revision_message.
"""
from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.appdb.models import LegacyMetric, Segment, Table, User
from core.assembly.events import emit
from core.content import revisions, segments
from core.content.segments import fetch, readable
from core.http.errors import Forbidden
from core.policy import permissions

Model = type[Segment] | type[LegacyMetric]

# Keys a PUT applies when present even as null, and keys it applies only when not null (Metabase).
NULLABLE_KEYS = ("description", "caveats", "points_of_interest", "how_is_this_calculated")
NON_NULL_KEYS = ("archived", "definition", "name", "show_in_getting_started")


def _topic(model: Model, action: str) -> str:
    return f"{'segment' if model is Segment else 'metric'}-{action}"


def list_all(session: Session, user: User, model: Model) -> list[dict]:
    """The non-archived ones the user may read, by lower-cased name, with creator and description."""
    rows = session.scalars(select(model).where(model.archived.is_(False)).order_by(func.lower(model.name), model.id))
    out = []
    for entity in rows:
        if readable(session, user, entity):
            item = segments.to_json(session, entity, description=True)
            if model is LegacyMetric:
                table = session.get(Table, entity.table_id)
                item["database_id"] = table.db_id if table is not None else None
            out.append(item)
    return out


def get(session: Session, user: User, model: Model, entity_id: int) -> dict:
    entity = fetch(session, user, model, entity_id)
    return segments.to_json(session, entity)


def create(session: Session, user: User, model: Model, *, name: str, description: str | None, table_id: int,
           definition: dict) -> dict:
    segments.check_definition(session, table_id, definition, metric=model is LegacyMetric)
    entity = model(name=name, description=description, table_id=table_id, definition=definition, creator_id=user.id)
    session.add(entity)
    session.flush()
    revisions.push(session, segments.kind_of(entity).model, entity.id, user.id, segments.serialize(entity),
                   is_creation=True)
    session.commit()
    emit(_topic(model, "create"), user.id, entity)
    return segments.to_json(session, entity)


def update(session: Session, user: User, model: Model, entity_id: int, changes: dict, message: str) -> dict:
    """Apply a PUT: nullable keys as given, the others when not null; a changed definition is checked
    against the table first. The revision carries `message`."""
    entity = fetch(session, user, model, entity_id)
    wanted = {k: v for k, v in changes.items() if k in NULLABLE_KEYS and hasattr(entity, k)}
    wanted.update({k: v for k, v in changes.items() if k in NON_NULL_KEYS and v is not None})
    if "definition" in wanted and wanted["definition"] != entity.definition:
        segments.check_definition(session, entity.table_id, wanted["definition"], metric=model is LegacyMetric,
                                  segment_id=entity.id if model is Segment else None)
    archiving = wanted.get("archived") is True and not entity.archived
    for key, value in wanted.items():
        if getattr(entity, key) != value:
            setattr(entity, key, value)
    session.flush()
    revisions.push(session, segments.kind_of(entity).model, entity.id, user.id, segments.serialize(entity),
                   message=message)
    session.commit()
    emit(_topic(model, "delete" if archiving else "update"), user.id, entity, revision_message=message)
    return segments.to_json(session, entity)


def history(session: Session, user: User, model: Model, entity_id: int) -> list[dict]:
    entity = fetch(session, user, model, entity_id)
    return revisions.history(session, segments.kind_of(entity), entity.id)


def revert(session: Session, user: User, model: Model, entity_id: int, revision_id: int) -> dict:
    """Back to the state of one of its revisions; answers with the new (reversion) revision. For
    administrators, like every write here: checked again because /api/revision/revert calls this too."""
    entity = fetch(session, user, model, entity_id)
    if not permissions.is_admin(user):
        raise Forbidden()
    out = revisions.revert(session, segments.kind_of(entity), entity.id, revision_id, user.id,
                           lambda state: segments.restore(entity, state))
    session.commit()
    emit(_topic(model, "update"), user.id, entity)
    return out
