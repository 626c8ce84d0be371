"""POST /api/dashboard/save and /save/collection/:id: persist a denormalized dashboard (an automatic
dashboard as the x-ray endpoints return it, cards without ids) as Metabase's save-transient-dashboard!
does: a new collection named after the dashboard (made unique among its siblings) inside the target,
the dashboard in it (pinned first), every card and series card saved there, mappings pointed at the new
cards. Without a target, administrators save into the "Automatically Generated Dashboards" collection
at the root (made once), others into their personal collection. One transaction.
"""
from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.appdb.models import Card, Collection, Database, User
from core.appdb.models.base import new_entity_id
from core.assembly import events
from core.content.cards import insert_card, referenced_card_ids
from core.content.collections import check_target, children_location, slugify
from core.http.errors import Forbidden, Invalid
from core.policy import permissions
from core.query import access
from core.query.mbql import normalize

from . import dashcards, revisions
from .models import Dashboard

CONTAINER = "Automatically Generated Dashboards"
CARDS_DESCRIPTION = "Automatically generated cards."


def _new_collection(session: Session, name: str, description: str | None, parent: Collection | None) -> Collection:
    collection = Collection(name=name, description=description, location=children_location(parent),
                            slug=slugify(name), entity_id=new_entity_id(), archived=False)
    session.add(collection)
    session.flush()
    return collection


def _default_parent(session: Session, user: User) -> Collection | None:
    if user.is_superuser:
        found = session.scalar(select(Collection).where(Collection.name == CONTAINER, Collection.location == "/",
                                                        Collection.namespace.is_(None),
                                                        Collection.personal_owner_id.is_(None),
                                                        Collection.archived.is_(False)).order_by(Collection.id))
        return found or _new_collection(session, CONTAINER, None, None)
    return session.scalar(select(Collection).where(Collection.personal_owner_id == user.id))


def _unique_name(session: Session, name: str, parent: Collection | None) -> str:
    """Metabase's ensure-unique-collection-name: "<name> <n+1>" when n siblings start with the name."""
    count = session.scalar(select(func.count()).select_from(Collection).where(
        Collection.location == children_location(parent), func.substr(Collection.name, 1, len(name)) == name))
    return name if not count else f"{name} {count + 1}"[:254]


def _save_card(session: Session, user: User, card, collection_id: int) -> Card:
    """A card of the description, saved once its query is one the caller may run."""
    try:
        query = normalize(card.dataset_query)
    except (TypeError, ValueError, KeyError, AttributeError, IndexError):
        raise Invalid({"dataset_query": "value must be a valid query."}) from None
    database_id = access.resolve_database(session, query)
    if not isinstance(database_id, int) or database_id >= 2**31 or session.get(Database, database_id) is None:
        raise Invalid({"dataset_query": f"Database {database_id} does not exist."})
    access.check_query(session, user, query, saved=False)
    for ref in referenced_card_ids(card.dataset_query):
        source = session.get(Card, ref) if ref < 2**31 else None
        if source is None:
            raise Invalid({"dataset_query": f"Card {ref} does not exist."})
        if not permissions.can_read_item(session, user, source.collection_id):
            raise Forbidden()
    return insert_card(session, user.id, card.dataset_query, database_id, name=card.name, display=card.display,
                       description=card.description, visualization_settings=card.visualization_settings or {},
                       parameters=card.parameters or [], result_metadata=card.result_metadata,
                       collection_id=collection_id)


def save(session: Session, user: User, body, parent_collection_id: int | None) -> Dashboard:
    if parent_collection_id is not None:
        parent = check_target(session, user, parent_collection_id)
    else:
        parent = _default_parent(session, user)
        check_target(session, user, parent.id if parent is not None else None)
    collection = _new_collection(session, _unique_name(session, body.name, parent), CARDS_DESCRIPTION, parent)
    dashboard = Dashboard(name=body.name, description=body.description, parameters=body.parameters or [],
                          collection_id=collection.id, collection_position=1, creator_id=user.id,
                          entity_id=new_entity_id())
    if body.width is not None:
        dashboard.width = body.width
    if body.auto_apply_filters is not None:
        dashboard.auto_apply_filters = body.auto_apply_filters
    session.add(dashboard)
    session.flush()
    wanted = []
    for index, item in enumerate(body.dashcards or []):
        card = _save_card(session, user, item.card, collection.id) if item.card is not None else None
        series = [_save_card(session, user, s, collection.id).id for s in item.series or []]
        mapping_list = [{**m.model_dump(exclude_unset=True), "card_id": card.id if card else None}
                        for m in item.parameter_mappings or []]
        wanted.append({"id": -(index + 1), "card_id": card.id if card else None, "size_x": item.size_x,
                       "size_y": item.size_y, "row": item.row, "col": item.col, "series": series,
                       "parameter_mappings": mapping_list,
                       "visualization_settings": item.visualization_settings or {},
                       "dashboard_tab_id": item.dashboard_tab_id})
    tabs = [{"id": t.id, "name": t.name} for t in body.tabs or []]
    dashcards.sync(session, user, dashboard.id, tabs, wanted)
    revisions.record(session, user, dashboard, creation=True)
    session.commit()
    events.emit("dashboard-create", user.id, dashboard)
    return session.get(Dashboard, dashboard.id)
