"""GET /api/dashboard/:id/query_metadata: in one answer, the databases, tables (with their fields) and
fields every card on the dashboard needs (series cards and the fields its filters are wired to
included), as Metabase's dashboard query metadata, limited to what the caller may see: cards whose
collection it cannot read are skipped, tables and fields whose data it cannot see are left out.
Metabase's frontend asks for it at every opening of a dashboard, so the answer is kept as JSON text
per audience (core.policy.audience) while what it read of the app DB is unchanged."""
from __future__ import annotations

from typing import Any

import orjson
from flask import Response
from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session

from core.appdb import memo
from core.appdb.models import Card, Database, Dimension, Field, Table, User
from core.content import segments
from core.content.metadata import database_json, dimension_json, field_json, ordered_fields, table_json
from core.http.api import dumps, json_response
from core.http.errors import ApiError, check_404
from core.policy import audience
from core.policy import permissions as perms
from core.policy.principal import key_of
from core.query import access

from .lookup import MAX_ID, readable_dashboard
from .models import Dashboard, DashboardCard, DashboardCardSeries
from .params import target_field_id


def query_metadata(session: Session, user: User, dashboard_id: int) -> Response:
    """The answer, kept per audience unless the groups alone do not decide it: a personal collection
    among those it may ask about (core.policy.audience.kept_answers keys it per user then), or a
    sandboxed caller (row-level security follows the user's own attributes: their own key). A refusal
    (403) is raised by the computation, so it is never kept: every request that meets it asks again."""
    collections = check_404(_kept_collections(session, dashboard_id))
    sandboxed = key_of(user) if perms.is_sandboxed(session, user) else None

    def compute() -> bytes:
        # Read inside as well: whether the audience decides follows from these collections, so the kept
        # answer depends on what they were read from.
        _kept_collections(session, dashboard_id)
        return dumps(_answer(session, user, dashboard_id))

    body = audience.kept_answers(session, user, ("dashboard query_metadata", dashboard_id, sandboxed), compute,
                                 collections, weigh=len)
    return json_response(orjson.Fragment(body))


def _kept_collections(session: Session, dashboard_id: int) -> tuple | None:
    """The collections whose rights the answer may ask about, whoever asks (None: no such dashboard),
    kept per dashboard."""
    return memo.get_or_compute(session, ("dashboard query_metadata collections", dashboard_id),
                               lambda: _collections(session, dashboard_id), alone=True)


def _collections(session: Session, dashboard_id: int) -> tuple | None:
    """What _answer asks the readability of for a caller who may read everything: the dashboard, its
    cards, the cards they use as sources and the metrics of every table it could list (archived ones
    too: more than it asks is only more cautious)."""
    with memo.fresh_session(session) as fresh:
        dashboard = fresh.get(Dashboard, dashboard_id) if dashboard_id < MAX_ID else None
        if dashboard is None:
            return None
        dashcards, cards = _dashcards_and_cards(fresh, dashboard.id)
        _, table_ids, field_ids, source_cards = _needs(fresh, dashcards, cards)
        field_ids = {i for i in field_ids if isinstance(i, int)}
        if field_ids:
            table_ids |= set(fresh.scalars(select(Field.table_id).where(Field.id.in_(field_ids))))
        table_ids |= _fk_target_tables(fresh, table_ids)
        others = fresh.scalars(select(Card.collection_id).where(or_(
            Card.id.in_(source_cards), and_(Card.type == "metric", Card.table_id.in_(table_ids)))))
        return tuple({dashboard.collection_id, *(c.collection_id for c in cards.values()), *others})


def _answer(session: Session, user: User, dashboard_id: int) -> dict:
    dashboard = readable_dashboard(session, user, dashboard_id)
    dashcards, cards = _dashcards_and_cards(session, dashboard.id)
    readable = {i: c for i, c in cards.items() if perms.can_read_item(session, user, c.collection_id)}
    database_ids, table_ids, field_ids, source_cards = _needs(session, dashcards, readable)

    field_ids = access.readable_field_ids(session, user, field_ids)
    fields = list(session.scalars(select(Field).where(Field.id.in_(field_ids)))) if field_ids else []
    # A filter's field is shown with its table, and the tables foreign keys lead to (the query
    # builder offers their columns through implicit joins), as Metabase's dependent metadata.
    table_ids |= {f.table_id for f in fields}
    table_ids |= _fk_target_tables(session, table_ids)
    tables = _visible_tables(session, user, table_ids)
    database_ids |= {t.db_id for t in tables}
    virtual = [c for c in (session.get(Card, i) for i in sorted(source_cards))
               if c is not None and not c.archived and perms.can_read_item(session, user, c.collection_id)
               and c.database_id is not None and perms.can_see_data(session, user, c.database_id)]
    databases = [d for d in (session.get(Database, i) for i in sorted(database_ids))
                 if d is not None and _database_visible(session, user, d, tables)]
    return {
        "databases": [_database(d) for d in databases],
        "tables": [_table(session, user, t) for t in tables] + [_card_table(c) for c in virtual],
        "fields": [field_json(f) for f in sorted(fields, key=lambda f: f.id)],
        "cards": [],
        "dashboards": [],
    }


def _dashcards_and_cards(session: Session, dashboard_id: int) -> tuple[list[DashboardCard], dict[int, Card]]:
    """The dashboard's dashcards, and the cards they show (series cards included) by id."""
    dashcards = list(session.scalars(select(DashboardCard).where(DashboardCard.dashboard_id == dashboard_id)
                                     .order_by(DashboardCard.id)))
    card_ids = {d.card_id for d in dashcards if d.card_id is not None}
    if dashcards:
        card_ids |= set(session.scalars(select(DashboardCardSeries.card_id).where(
            DashboardCardSeries.dashboardcard_id.in_([d.id for d in dashcards]))))
    cards = {c.id: c for c in session.scalars(select(Card).where(Card.id.in_(card_ids)))} if card_ids else {}
    return dashcards, cards


def _needs(session: Session, dashcards: list[DashboardCard], cards: dict[int, Card]) -> tuple[set, set, set, set]:
    """(database ids, table ids, field ids, source card ids) that `cards` read, with the fields the
    dashcards' filters are wired to on them."""
    database_ids: set[int] = set()
    table_ids: set[int] = set()
    field_ids: set[int] = set()
    source_cards: set[int] = set()
    for card in cards.values():
        _collect(session, card, database_ids, table_ids, field_ids, source_cards)
    for dashcard in dashcards:
        for mapping in dashcard.parameter_mappings or []:
            if isinstance(mapping, dict):
                card = cards.get(mapping.get("card_id", dashcard.card_id))
                if card is not None:
                    fid = target_field_id(card, mapping.get("target"))
                    if fid is not None:
                        field_ids.add(fid)
    return database_ids, table_ids, field_ids, source_cards


def _collect(session: Session, card: Card, database_ids: set, table_ids: set, field_ids: set,
             source_cards: set) -> None:
    """What the card's query reads: its database, tables, fields and the cards it uses as sources."""
    from core.query.mbql import normalize
    from core.query.model import referenced_ids

    if card.database_id is not None:
        database_ids.add(card.database_id)
    if card.table_id is not None:
        table_ids.add(card.table_id)
    try:
        query = normalize(card.dataset_query)
    except (ApiError, TypeError, ValueError, KeyError, AttributeError, IndexError):
        return
    fields, tables = referenced_ids(query.stages)
    native = query.stages[0].native if query.stages else None
    for tag in ((native or {}).get("template-tags") or {}).values() if isinstance(native, dict) else ():
        if isinstance(tag, dict) and tag.get("type") == "dimension":
            dimension = tag.get("dimension")
            if isinstance(dimension, list) and len(dimension) > 1 and isinstance(dimension[1], int):
                fields.add(dimension[1])
    field_ids |= fields
    table_ids |= tables
    stages = list(query.stages)
    while stages:
        stage = stages.pop()
        if stage.source_card is not None:
            source_cards.add(stage.source_card)
        for join in stage.joins:
            stages.extend(join.stages)


def _fk_target_tables(session: Session, table_ids: set[int]) -> set[int]:
    if not table_ids:
        return set()
    targets = select(Field.fk_target_field_id).where(Field.table_id.in_(table_ids), Field.active.is_(True),
                                                     Field.fk_target_field_id.is_not(None))
    return set(session.scalars(select(Field.table_id).where(Field.id.in_(targets))))


def _visible_tables(session: Session, user: User, table_ids: set[int]) -> list[Table]:
    rows = list(session.scalars(select(Table).where(Table.id.in_(table_ids), Table.active.is_(True)))) \
        if table_ids else []
    by_db: dict[int, list[Table]] = {}
    for table in rows:
        by_db.setdefault(table.db_id, []).append(table)
    visible = []
    for db_id, tables in by_db.items():
        allowed = perms.tables_with_data_access(session, user, db_id, [t.id for t in tables])
        visible.extend(t for t in tables if t.id in allowed)
    return sorted(visible, key=lambda t: t.id)


def _database_visible(session: Session, user: User, database: Database, tables: list[Table]) -> bool:
    return any(t.db_id == database.id for t in tables) or perms.can_see_data(session, user, database.id)


def _database(database: Database) -> dict:
    from core.driver.connections import driver_for

    try:
        driver = driver_for(database)
    except Exception:  # a database whose driver is disabled still shows; it offers no features
        driver = None
    return database_json(database, driver)


def _table(session: Session, user: User, table: Table) -> dict:
    fields = [f for f in session.scalars(select(Field).where(Field.table_id == table.id, Field.active.is_(True)))
              if f.visibility_type not in ("sensitive", "retired")]
    dimensions = {d.field_id: d for d in session.scalars(
        select(Dimension).where(Dimension.field_id.in_([f.id for f in fields])))} if fields else {}
    out: dict[str, Any] = table_json(table, schema_as_string=True)
    out["fields"] = [{**field_json(f), "dimensions": [dimension_json(dimensions[f.id])] if f.id in dimensions else []}
                     for f in ordered_fields(table, fields)]
    out["segments"] = segments.table_segments(session, [table.id])[table.id]
    out["metrics"] = segments.table_metrics(session, user, [table.id])[table.id]
    return out


def _card_table(card: Card) -> dict:
    """A card used as a source, seen as the table `card__<id>` whose fields are its result columns."""
    columns = [c for c in card.result_metadata or [] if isinstance(c, dict)]
    fields = []
    for column in columns:
        base = column.get("base_type") or "type/*"
        ref = ["field", column.get("name"), {"base-type": base}]
        fields.append({**column, "table_id": f"card__{card.id}", "base_type": base,
                       "id": column["id"] if isinstance(column.get("id"), int) else ref,
                       "field_ref": column.get("field_ref") or ref,
                       "display_name": column.get("display_name") or column.get("name")})
    return {"id": f"card__{card.id}", "db_id": card.database_id, "name": card.name, "display_name": card.name,
            "description": card.description, "type": card.type, "card_id": card.id, "active": True,
            "schema": None, "fields": fields, "segments": [], "metrics": []}
