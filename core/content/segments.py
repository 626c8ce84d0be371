"""Segments and legacy metrics as the rest of Tessera needs them: their JSON, validating a definition
against its table, their revision kinds, and who uses them (table metadata, card filters, search).

The definitions plugin owns the endpoints; the tables, databases, cards and search plugins read
segments (and metric cards) through here, and who may read one (`readable`, `fetch`) is decided here
for all of them.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Card, LegacyMetric, Segment, Table, User
from core.http.errors import Forbidden, Invalid, NotFound
from core.identity.users import creator_json
from core.policy import permissions

from .revisions import Kind

SEGMENT = Kind(model="Segment", label="Segment", diff_keys=("name", "description", "definition"))
LEGACY_METRIC = Kind(model="Metric", label="Metric", diff_keys=("name", "description", "definition"))

# The columns a revision records and a revert writes back (Metabase: all but the timestamps).
SEGMENT_COLUMNS = ("id", "name", "description", "table_id", "definition", "creator_id", "archived", "caveats",
                   "points_of_interest", "show_in_getting_started", "entity_id")
METRIC_COLUMNS = SEGMENT_COLUMNS + ("how_is_this_calculated",)
REVERTIBLE = ("name", "description", "definition", "archived", "caveats", "points_of_interest",
              "show_in_getting_started", "how_is_this_calculated")


def readable(session: Session, user: User, entity: Segment | LegacyMetric) -> bool:
    """Data-model rights on its table (Metabase v0.50+'s can-read?: manage-table-metadata); blocked data
    access also hides it, whatever other rights say."""
    table = session.get(Table, entity.table_id)
    return (table is not None and permissions.can_edit_data_model(session, user, table.db_id, table.id)
            and permissions.can_see_data(session, user, table.db_id, table.id))


def fetch(session: Session, user: User, model: type[Segment] | type[LegacyMetric], entity_id: int):
    """The row, when the user may read it (404 when missing, 403 without data-model permission or
    with blocked data access)."""
    entity = session.get(model, entity_id)
    if entity is None:
        raise NotFound()
    if not readable(session, user, entity):
        raise Forbidden()
    return entity


def kind_of(entity: Segment | LegacyMetric) -> Kind:
    return SEGMENT if isinstance(entity, Segment) else LEGACY_METRIC


def serialize(entity: Segment | LegacyMetric) -> dict:
    """The state a revision records."""
    columns = SEGMENT_COLUMNS if isinstance(entity, Segment) else METRIC_COLUMNS
    return {c: getattr(entity, c) for c in columns}


def restore(entity: Segment | LegacyMetric, state: dict) -> None:
    """Write a recorded state back onto the row (keys the row no longer has are skipped)."""
    for key in REVERTIBLE:
        if key in state and hasattr(entity, key):
            setattr(entity, key, state[key])


def to_json(session: Session, entity: Segment | LegacyMetric, *, creator: bool = True,
            description: bool = False) -> dict:
    out = {c: getattr(entity, c) for c in (SEGMENT_COLUMNS if isinstance(entity, Segment) else METRIC_COLUMNS)}
    out["definition"] = entity.definition or {}
    out["created_at"] = entity.created_at
    out["updated_at"] = entity.updated_at
    if creator:
        out["creator"] = creator_json(session.get(User, entity.creator_id))
    if description:
        out["definition_description"] = definition_description(session, entity)
    return out


def definition_description(session: Session, entity: Segment | LegacyMetric) -> str | None:
    """What the definition does in words; None when it cannot be read (never an error in a list)."""
    from core.query.describe import describe_aggregations, describe_filters
    from core.query.macros import definition_stage

    try:
        stage = definition_stage(session, entity.definition, entity.table_id)
    except Invalid:
        return None
    filters = describe_filters(session, stage.filters)
    if isinstance(entity, Segment):
        return filters
    parts = [p for p in (describe_aggregations(session, stage.aggregations[:1]), filters) if p]
    return ", ".join(parts) or None


def check_definition(session: Session, table_id: int, definition: Any, *, metric: bool,
                     segment_id: int | None = None) -> Table:
    """The definition's table, once the definition is known to compile over it: a segment needs a
    filter, a legacy metric exactly one aggregation (and may filter); a segment's new definition may
    not reach the segment itself (`segment_id`) through other segments. 400 otherwise."""
    from core.appdb.models import Database
    from core.driver.connections import driver_for
    from core.query.compiler import compile_query
    from core.query.macros import definition_query, segments_reached
    from core.query.mbql import normalize

    table = session.get(Table, table_id)
    if table is None:
        raise Invalid({"table_id": f"Table {table_id} does not exist."})
    if not isinstance(definition, dict):
        raise Invalid({"definition": "value must be a map."})
    query = normalize(definition_query(definition, table.id, table.db_id))
    stage = query.stages[0] if len(query.stages) == 1 else None
    if stage is None or stage.native is not None or stage.source_table != table.id:
        raise Invalid("Invalid definition: it must be one MBQL stage over its table.")
    if metric and len(stage.aggregations) != 1:
        raise Invalid("Invalid definition: a metric definition needs exactly one aggregation.")
    if not metric and not stage.filters:
        raise Invalid("Invalid definition: a segment definition needs a filter.")
    if not metric and (stage.aggregations or stage.breakouts):
        raise Invalid("Invalid definition: a segment definition is a filter; it cannot aggregate.")
    if stage.breakouts:
        raise Invalid("Invalid definition: a metric definition cannot have breakouts.")
    if segment_id is not None and segment_id in segments_reached(session, definition):
        raise Invalid("Segment expansion failed. Check mutually recursive segment definitions.")
    database = session.get(Database, table.db_id)
    compile_query(session, query, driver_for(database))
    return table


def table_segments(session: Session, table_ids: list[int]) -> dict[int, list[dict]]:
    """The non-archived segments of each table, by name, as table metadata lists them."""
    out: dict[int, list[dict]] = {t: [] for t in table_ids}
    if not table_ids:
        return out
    rows = session.scalars(select(Segment).where(Segment.table_id.in_(table_ids), Segment.archived.is_(False))
                           .order_by(Segment.name, Segment.id))
    for segment in rows:
        out[segment.table_id].append(to_json(session, segment, creator=False, description=True))
    return out


def table_metrics(session: Session, user: User, table_ids: list[int]) -> dict[int, list[dict]]:
    """The non-archived metric cards over each table that the user may read (Metabase v0.50+ lists
    metric cards, not legacy metrics, in a table's metadata)."""
    from core.policy import permissions

    from .cards import base_json

    out: dict[int, list[dict]] = {t: [] for t in table_ids}
    if not table_ids:
        return out
    rows = session.scalars(select(Card).where(Card.type == "metric", Card.archived.is_(False),
                                              Card.table_id.in_(table_ids)).order_by(Card.name, Card.id))
    for card in rows:
        if permissions.can_read_item(session, user, card.collection_id):
            out[card.table_id].append(base_json(card))
    return out


def cards_using_segment(session: Session, segment_id: int) -> list[Card]:
    """The non-archived cards over the segment's table whose query names the segment."""
    from core.query.macros import clause_ids

    segment = session.get(Segment, segment_id)
    if segment is None:
        return []
    cards = session.scalars(select(Card).where(Card.table_id == segment.table_id, Card.archived.is_(False)))
    return [c for c in cards if segment_id in clause_ids(c.dataset_query, "segment")]
