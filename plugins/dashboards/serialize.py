"""How a dashboard is shown: its columns, and GET /api/dashboard/:id's hydration (Metabase's
hydrate-dashboard-details): dashcards with their cards and series, tabs, param_fields, the collection,
what the caller may do, last-edit-info.

A card the caller cannot read is shown as `{"id": N}` only, on a dashcard and in its series, as Metabase
does; param_fields lists only fields whose table data the caller may see (core.query.access).
"""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Card, Collection, Dimension, Field, User
from core.content import revisions
from core.content.cards import base_json as card_base_json
from core.content.collections import Access, collection_json
from core.content.metadata import dimension_json, field_json
from core.identity.users import creator_json
from core.query import access as data_access

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


def summary_json(session: Session, dashboard: Dashboard) -> dict:
    """A dashboard in GET /api/dashboard/: its columns, creator and last-edit-info."""
    out = base_json(dashboard)
    out["creator"] = creator_json(session.get(User, dashboard.creator_id))
    info = revisions.last_edit_info(session, MODEL, dashboard.id)
    if info is not None:
        out["last-edit-info"] = info
    return out


def tab_json(tab: DashboardTab) -> dict:
    return {"id": tab.id, "dashboard_id": tab.dashboard_id, "name": tab.name, "position": tab.position,
            "entity_id": tab.entity_id, "created_at": tab.created_at, "updated_at": tab.updated_at}


def card_json(access: Access, card: Card | None, card_id: int | None) -> dict | None:
    """A dashcard's card: its columns and can_write, or only its id when the caller cannot read it."""
    if card_id is None:
        return None
    if card is None or not access.can_read(card.collection_id):
        return {"id": card_id}
    return {**card_base_json(card), "can_write": access.can_write(card.collection_id),
            "query_average_duration": None}


def dashcard_json(access: Access, layout: Layout, dashcard: DashboardCard, authority: dict) -> dict:
    card = layout.cards.get(dashcard.card_id) if dashcard.card_id is not None else None
    return {
        "id": dashcard.id, "dashboard_id": dashcard.dashboard_id, "dashboard_tab_id": dashcard.dashboard_tab_id,
        "card_id": dashcard.card_id, "action_id": dashcard.action_id, "action": None,
        "size_x": dashcard.size_x, "size_y": dashcard.size_y, "row": dashcard.row, "col": dashcard.col,
        "parameter_mappings": dashcard.parameter_mappings or [],
        "visualization_settings": dashcard.visualization_settings or {},
        "entity_id": dashcard.entity_id, "created_at": dashcard.created_at, "updated_at": dashcard.updated_at,
        "collection_authority_level": authority.get(card.collection_id) if card is not None else None,
        "card": card_json(access, card, dashcard.card_id),
        "series": [card_json(access, layout.cards.get(i), i) for i in layout.series.get(dashcard.id, [])],
    }


def dashcards_json(session: Session, access: Access, layout: Layout) -> list[dict]:
    ids = {c.collection_id for c in layout.cards.values() if c.collection_id is not None}
    authority = dict(session.execute(select(Collection.id, Collection.authority_level)
                                     .where(Collection.id.in_(ids))).all()) if ids else {}
    return [dashcard_json(access, layout, d, authority) for d in layout.dashcards]


def param_fields(session: Session, user: User, access: Access, layout: Layout) -> dict:
    """Field id -> field JSON for every field a parameter mapping (or a readable native card's field
    filter) reaches, among those whose table data the caller may see (Metabase's param_fields)."""
    wanted: set[int] = set()
    for dashcard in layout.dashcards:
        card = layout.cards.get(dashcard.card_id) if dashcard.card_id is not None else None
        readable = card is not None and access.can_read(card.collection_id)
        for mapping in dashcard.parameter_mappings or []:
            if not isinstance(mapping, dict):
                continue
            own = layout.cards.get(mapping.get("card_id")) if isinstance(mapping.get("card_id"), int) else card
            query = own.dataset_query if own is not None and access.can_read(own.collection_id) else None
            field_id = mappings.target_field_id(mapping.get("target"), query)
            if field_id is not None:
                wanted.add(field_id)
        if readable:
            wanted |= mappings.tag_field_ids(card.dataset_query)
    visible = data_access.readable_field_ids(session, user, {i for i in wanted if i < 2**31})
    if not visible:
        return {}
    fields = {f.id: f for f in session.scalars(select(Field).where(Field.id.in_(visible)))}
    dimensions: dict[int, list] = {}
    for dimension in session.scalars(select(Dimension).where(Dimension.field_id.in_(fields))):
        dimensions.setdefault(dimension.field_id, []).append(dimension)
    name_fields = _name_fields(session, [f for f in fields.values() if f.semantic_type == "type/PK"])
    out = {}
    for field_id in sorted(fields):
        field = fields[field_id]
        data = field_json(field)
        data["name_field"] = name_fields.get(field.table_id) if field.semantic_type == "type/PK" else None
        data["dimensions"] = [dimension_json(d) for d in dimensions.get(field_id, [])]
        data["target"] = None
        out[str(field_id)] = data
    return out


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
    access = Access(session, user)
    layout = load_layout(session, dashboard.id)
    can_write = access.can_write(dashboard.collection_id)
    collection = collection_json(session, access, dashboard.collection_id)
    out = base_json(dashboard)
    out.update({
        "dashcards": dashcards_json(session, access, layout),
        "tabs": [tab_json(t) for t in layout.tabs],
        "param_fields": param_fields(session, user, access, layout),
        "can_write": can_write,
        "can_restore": can_write and dashboard.archived,
        "can_delete": can_write and dashboard.archived,
        "collection": collection,
        "collection_authority_level": collection.get("authority_level") if collection else None,
        "last_used_param_values": {},
        "moderation_reviews": [],
        "creator": creator_json(session.get(User, dashboard.creator_id)),
    })
    actions.hydrate(session, user, out["dashcards"])
    info = revisions.last_edit_info(session, MODEL, dashboard.id)
    if info is not None:
        out["last-edit-info"] = info
    return out
