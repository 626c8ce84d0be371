"""Bookmarks: list (Metabase's bookmark shape), create, delete and order a user's bookmarks.

Which rows exist is core.content.bookmarks; this module adds what the endpoints decide: read checks on
create, and hiding archived or no-longer-readable items on list (the rows stay, as in Metabase). Cards
and collections are read here; other kinds (dashboards) through their plugin's ContentKind.lookup
(core.content.kinds), so without that plugin they are 404 and never listed.
"""
from __future__ import annotations

from sqlalchemy import delete as sql_delete
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.appdb.models import BookmarkOrdering, Card, Collection, User
from core.content import bookmarks, kinds
from core.content.collections import Access, personal_names
from core.http.errors import Forbidden, Invalid, NotFound, check_404


def _json(kind: str, item_id: int, **values) -> dict:
    """Metabase's bookmark: string id "<type>-<item_id>", keys without a value left out."""
    out = {"id": f"{kind}-{item_id}", "type": kind, "item_id": item_id}
    out.update({k: v for k, v in values.items() if v is not None})
    return out


def list_bookmarks(session: Session, user: User) -> list[dict]:
    rows = bookmarks.bookmarks(session, user)
    ids = {kind: [b.item_id for b in rows if b.type == kind] for kind in bookmarks.TYPES}
    cards = {c.id: c for c in session.scalars(select(Card).where(Card.id.in_(ids["card"])))} if ids["card"] else {}
    collections = {c.id: c for c in session.scalars(select(Collection).where(Collection.id.in_(ids["collection"])))} \
        if ids["collection"] else {}
    names = personal_names(session, [c.personal_owner_id for c in collections.values() if c.personal_owner_id])
    others = {kind: kinds.lookup(session, kind, ids[kind]) for kind in bookmarks.TYPES
              if kind not in ("card", "collection")}
    access = Access(session, user)
    out = []
    for row in rows:
        if row.type == "card":
            card = cards.get(row.item_id)
            if card is None or card.archived or not access.can_read(card.collection_id):
                continue
            out.append(_json("card", card.id, name=card.name, card_type=card.type, dataset=card.type == "model",
                             description=card.description, display=card.display))
        elif row.type == "collection":
            collection = collections.get(row.item_id)
            if collection is None or collection.archived or not access.can_read(collection.id):
                continue
            name = names.get(collection.personal_owner_id, collection.name)
            out.append(_json("collection", collection.id, name=name, description=collection.description,
                             authority_level=collection.authority_level))
        else:
            item = others.get(row.type, {}).get(row.item_id)
            if item is None or item.archived or not access.can_read(item.collection_id):
                continue
            out.append(_json(row.type, item.id, name=item.name, description=item.description))
    return out


def _check_readable(session: Session, user: User, kind: str, item_id: int) -> None:
    """Metabase's read-check of the item: 404 when it does not exist, 403 when it cannot be read."""
    if kind == "card":
        card = check_404(session.get(Card, item_id))
        readable = Access(session, user).can_read(card.collection_id)
    elif kind == "collection":
        collection = check_404(session.get(Collection, item_id))
        readable = Access(session, user).can_read(collection.id)
    else:  # dashboards: known only while their plugin is enabled
        item = kinds.lookup(session, kind, [item_id]).get(item_id)
        if item is None or kind not in bookmarks.tables():
            raise NotFound()
        readable = Access(session, user).can_read(item.collection_id)
    if not readable:
        raise Forbidden()


def create(session: Session, user: User, kind: str, item_id: int) -> dict:
    _check_readable(session, user, kind, item_id)
    if item_id in bookmarks.bookmarked_ids(session, user, kind, [item_id]):
        raise Invalid("Bookmark already exists")
    model, column = bookmarks.tables()[kind]
    row = model(user_id=user.id, **{column.key: item_id})
    session.add(row)
    try:
        session.commit()
    except IntegrityError:  # a concurrent request added the same bookmark first
        session.rollback()
        raise Invalid("Bookmark already exists") from None
    return {"id": row.id, "user_id": row.user_id, column.key: item_id, "created_at": row.created_at}


def delete(session: Session, user: User, kind: str, item_id: int) -> None:
    table = bookmarks.tables().get(kind)
    if table is None:
        return  # the kind's plugin is disabled: its bookmarks stay for when it comes back
    model, column = table
    session.execute(sql_delete(model).where(model.user_id == user.id, column == item_id))
    session.commit()


def save_ordering(session: Session, user: User, orderings: list[tuple[str, int]]) -> None:
    """Metabase replaces the whole ordering: every old position goes, the list's order is the new one."""
    if len(set(orderings)) != len(orderings):
        raise Invalid({"orderings": "Each bookmark may appear only once."})
    session.execute(sql_delete(BookmarkOrdering).where(BookmarkOrdering.user_id == user.id))
    session.add_all(BookmarkOrdering(user_id=user.id, type=kind, item_id=item_id, ordering=position)
                    for position, (kind, item_id) in enumerate(orderings))
    session.commit()
