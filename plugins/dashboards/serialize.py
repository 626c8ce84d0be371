"""How a dashboard is shown: its columns, and GET /api/dashboard/:id's hydration (Metabase's
hydrate-dashboard-details): dashcards with their cards and series, tabs, param_fields, the collection,
what the caller may do, last-edit-info.

A card the caller cannot read is shown as `{"id": N}` only, on a dashcard and in its series, as Metabase
does; param_fields lists only fields whose table data the caller may see (core.query.access).
"""
from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Card, Collection, Dimension, Field, Table, User
from core.content import revisions
from core.content.cards import base_json as card_base_json
from core.content.collections import Access, collection_facts, with_can_write
from core.content.metadata import dimension_json, field_json
from core.identity.users import creator_json
from core.policy import permissions

from . import actions, mappings
from .dashcards import Layout, load_layout
from .models import Dashboard, DashboardCard, DashboardTab

MODEL = "Dashboard"


def base_json(dashboard: Dashboard) -> dict:
    """The stored columns."""
    return {
        "id": dashboard.id, "name": dashboard.name, "description": dashboard.description,
        "creator_id": dashboard.creator_id, "parameters": dashboard.parameters or [],
        "points_of_interest": dashboard.points_of_interest, "caveats": dashboard.caveats,
        "show_in_getting_started": dashboard.show_in_getting_started, "collection_id": dashboard.collection_id,
        "collection_position": dashboard.collection_position, "position": dashboard.position,
        "width": dashboard.width, "auto_apply_filters": dashboard.auto_apply_filters,
        "cache_ttl": dashboard.cache_ttl, "archived": dashboard.archived,
        "archived_directly": dashboard.archived_directly, "enable_embedding": dashboard.enable_embedding,
        "embedding_params": dashboard.embedding_params, "public_uuid": dashboard.public_uuid,
        "made_public_by_id": dashboard.made_public_by_id, "initially_published_at": dashboard.initially_published_at,
        "entity_id": dashboard.entity_id, "view_count": dashboard.view_count,
        "last_viewed_at": dashboard.last_viewed_at, "created_at": dashboard.created_at,
        "updated_at": dashboard.updated_at,
    }


def summaries_json(session: Session, dashboards: list[Dashboard]) -> list[dict]:
    """The dashboards of GET /api/dashboard/, their last edits read for the whole list at once."""
    edits = revisions.last_edit_infos(session, MODEL, (d.id for d in dashboards))
    return [summary_json(session, d, edits.get(d.id)) for d in dashboards]


def summary_json(session: Session, dashboard: Dashboard, last_edit: dict | None) -> dict:
    """A dashboard in GET /api/dashboard/: its columns, creator and last-edit-info."""
    out = base_json(dashboard)
    out["creator"] = creator_json(session.get(User, dashboard.creator_id))
    if last_edit is not None:
        out["last-edit-info"] = last_edit
    return out


def tab_json(tab: DashboardTab) -> dict:
    return {"id": tab.id, "dashboard_id": tab.dashboard_id, "name": tab.name, "position": tab.position,
            "entity_id": tab.entity_id, "created_at": tab.created_at, "updated_at": tab.updated_at}


def card_facts(card: Card | None) -> dict | None:
    """A dashcard's card as every user is shown it (with_rights lays the caller's rights over it)."""
    return None if card is None else {**card_base_json(card), "query_average_duration": None}


def card_with_rights(access: Access, facts: dict | None, card_id: int | None) -> dict | None:
    """A dashcard's card: its columns and can_write, or only its id when the caller cannot read it."""
    if card_id is None:
        return None
    if facts is None or not access.can_read(facts["collection_id"]):
        return {"id": card_id}
    return {**facts, "can_write": access.can_write(facts["collection_id"])}


def dashcard_facts(layout: Layout, dashcard: DashboardCard, authority: dict) -> dict:
    """A dashcard as every user is shown it: `card` and `series` hold the cards' facts (card_facts)."""
    card = layout.cards.get(dashcard.card_id) if dashcard.card_id is not None else None
    return {
        "id": dashcard.id, "dashboard_id": dashcard.dashboard_id, "dashboard_tab_id": dashcard.dashboard_tab_id,
        "card_id": dashcard.card_id, "action_id": dashcard.action_id, "action": None,
        "size_x": dashcard.size_x, "size_y": dashcard.size_y, "row": dashcard.row, "col": dashcard.col,
        "parameter_mappings": dashcard.parameter_mappings or [],
        "visualization_settings": dashcard.visualization_settings or {},
        "entity_id": dashcard.entity_id, "created_at": dashcard.created_at, "updated_at": dashcard.updated_at,
        "collection_authority_level": authority.get(card.collection_id) if card is not None else None,
        "card": card_facts(card),
        "series": [(i, card_facts(layout.cards.get(i))) for i in layout.series.get(dashcard.id, [])],
    }


def dashcard_with_rights(access: Access, facts: dict) -> dict:
    return {**facts, "card": card_with_rights(access, facts["card"], facts["card_id"]),
            "series": [card_with_rights(access, card, i) for i, card in facts["series"]]}


def dashcards_facts(session: Session, layout: Layout) -> list[dict]:
    ids = {c.collection_id for c in layout.cards.values() if c.collection_id is not None}
    authority = dict(session.execute(select(Collection.id, Collection.authority_level)
                                     .where(Collection.id.in_(ids))).all()) if ids else {}
    return [dashcard_facts(layout, d, authority) for d in layout.dashcards]


def dashcards_json(session: Session, access: Access, layout: Layout) -> list[dict]:
    return [dashcard_with_rights(access, facts) for facts in dashcards_facts(session, layout)]


class ParamFields(NamedTuple):
    """What param_fields needs of a dashboard whoever asks: each field a parameter mapping or a native
    card's field filter may reach, as (the card whose readability decides, the field when the caller
    may read that card, the field otherwise), and every such field's JSON with its table."""
    reached: tuple[tuple[int | None, int | None, int | None], ...]
    fields: dict[int, tuple[int, int, dict]]  # field id -> (database id, table id, field JSON)


def param_field_facts(session: Session, layout: Layout) -> ParamFields:
    reached = []
    for dashcard in layout.dashcards:
        card = layout.cards.get(dashcard.card_id) if dashcard.card_id is not None else None
        for mapping in dashcard.parameter_mappings or []:
            if not isinstance(mapping, dict):
                continue
            own = layout.cards.get(mapping.get("card_id")) if isinstance(mapping.get("card_id"), int) else card
            target = mapping.get("target")
            reached.append((own.id if own is not None else None,
                            mappings.target_field_id(target, own.dataset_query) if own is not None else None,
                            mappings.target_field_id(target, None)))
        if card is not None:
            reached.extend((card.id, field_id, None) for field_id in mappings.tag_field_ids(card.dataset_query))
    wanted = {i for _, readable, other in reached for i in (readable, other) if i is not None and i < 2**31}
    fields = {}
    if wanted:
        found = {f.id: f for f in session.scalars(select(Field).where(Field.id.in_(wanted)))}
        databases = dict(session.execute(select(Table.id, Table.db_id).where(
            Table.id.in_({f.table_id for f in found.values()}))).all())
        dimensions: dict[int, list] = {}
        for dimension in session.scalars(select(Dimension).where(Dimension.field_id.in_(found))):
            dimensions.setdefault(dimension.field_id, []).append(dimension)
        name_fields = _name_fields(session, [f for f in found.values() if f.semantic_type == "type/PK"])
        for field_id, field in found.items():
            if field.table_id not in databases:
                continue
            data = field_json(field)
            data["name_field"] = name_fields.get(field.table_id) if field.semantic_type == "type/PK" else None
            data["dimensions"] = [dimension_json(d) for d in dimensions.get(field_id, [])]
            data["target"] = None
            fields[field_id] = (databases.get(field.table_id), field.table_id, data)
    return ParamFields(tuple(reached), fields)


def param_fields(session: Session, user: User, access: Access, facts: ParamFields,
                 card_collections: dict[int, int | None]) -> dict:
    """Field id -> field JSON for every field a parameter mapping (or a readable native card's field
    filter) reaches, among those whose table data the caller may see (Metabase's param_fields)."""
    wanted = set()
    for card_id, when_readable, otherwise in facts.reached:
        readable = card_id in card_collections and access.can_read(card_collections[card_id])
        field_id = when_readable if readable else otherwise
        if field_id is not None and field_id in facts.fields:
            wanted.add(field_id)
    by_database: dict[int, set[int]] = {}
    for field_id in wanted:
        database_id, table_id, _ = facts.fields[field_id]
        by_database.setdefault(database_id, set()).add(table_id)
    visible = {database_id: permissions.tables_with_data_access(session, user, database_id, tables)
               for database_id, tables in by_database.items()}
    return {str(field_id): facts.fields[field_id][2] for field_id in sorted(wanted)
            if facts.fields[field_id][1] in visible[facts.fields[field_id][0]]}


def _name_fields(session: Session, pk_fields: list[Field]) -> dict[int, dict]:
    table_ids = {f.table_id for f in pk_fields}
    if not table_ids:
        return {}
    out: dict[int, dict] = {}
    for field in session.scalars(select(Field).where(Field.table_id.in_(table_ids), Field.semantic_type == "type/Name",
                                                     Field.active.is_(True)).order_by(Field.database_position)):
        out.setdefault(field.table_id, field_json(field))
    return out


def dashboard_json(session: Session, user: User, dashboard: Dashboard) -> dict:
    """GET /api/dashboard/:id (and what PUT, POST and save answer)."""
    return with_rights(session, user, dashboard_facts(session, dashboard))


def dashboard_facts(session: Session, dashboard: Dashboard) -> dict:
    """The hydrated dashboard as every user is shown it; with_rights lays the caller's rights over it
    (its cards', its collection's, param_fields and actions). The ParamFields travel under the key
    PARAM_FIELDS, which with_rights replaces with the caller's param_fields."""
    layout = load_layout(session, dashboard.id)
    collection = collection_facts(session, dashboard.collection_id)
    out = base_json(dashboard)
    out.update({
        "dashcards": dashcards_facts(session, layout),
        "tabs": [tab_json(t) for t in layout.tabs],
        PARAM_FIELDS: param_field_facts(session, layout),
        "collection": collection,
        "collection_authority_level": collection.get("authority_level") if collection else None,
        "last_used_param_values": {},
        "moderation_reviews": [],
        "creator": creator_json(session.get(User, dashboard.creator_id)),
    })
    info = revisions.last_edit_info(session, MODEL, dashboard.id)
    if info is not None:
        out["last-edit-info"] = info
    return out


PARAM_FIELDS = "param_fields"


def with_rights(session: Session, user: User, facts: dict) -> dict:
    """A dashboard's facts (dashboard_facts) with what `user` may do and see: each card in full or as
    its id alone, param_fields, can_write on it and on its collection, its actions."""
    access = Access(session, user)
    can_write = access.can_write(facts["collection_id"])
    dashcards = [dashcard_with_rights(access, d) for d in facts["dashcards"]]
    card_collections = {card["id"]: card["collection_id"] for d in facts["dashcards"]
                        for card in (d["card"], *(c for _, c in d["series"])) if card is not None}
    out = {**facts, "dashcards": dashcards,
           "param_fields": param_fields(session, user, access, facts[PARAM_FIELDS], card_collections),
           "collection": with_can_write(access, facts["collection"]),
           "can_write": can_write, "can_restore": can_write and facts["archived"],
           "can_delete": can_write and facts["archived"]}
    actions.hydrate(session, user, out["dashcards"])
    return out
