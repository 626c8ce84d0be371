"""Cards: create, read, update, archive, copy, move, list, share. Every change records a revision.

Services take the app-DB session and the calling user; permission questions go to core.policy.permissions.
"""
from __future__ import annotations

import logging

from sqlalchemy import func, select
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from core.appdb import counters, rows
from core.appdb.models import Card, Database, Segment, Table, User, utcnow
from core.assembly import events
from core.content import bookmarks, revisions, segments
from core.content import related as core_related
from core.content.cards import duplicate, is_native, query_fields, referenced_card_ids, revision_object
from core.http.errors import Forbidden, Invalid, check_404
from core.policy import permissions as perms
from core.policy import sharing
from core.query.access import VIRTUAL_DATABASE, database_of

from . import metadata

log = logging.getLogger("tessera.cards")


def _record(session: Session, user: User, card: Card, *, creation: bool = False) -> None:
    revisions.record(session, "Card", card.id, user.id, revision_object(card), is_creation=creation)


# --------------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------------


def get_card(session: Session, card_id: int) -> Card:
    return check_404(rows.get(session, Card, card_id))


def readable_card(session: Session, user: User, card_id: int) -> Card:
    card = get_card(session, card_id)
    if not perms.can_read_item(session, user, card.collection_id):
        raise Forbidden()
    return card


def writable_card(session: Session, user: User, card_id: int) -> Card:
    card = get_card(session, card_id)
    if not perms.can_write_item(session, user, card.collection_id):
        raise Forbidden()
    return card


def view_card(session: Session, user: User, card_id: int, ignore_view: bool) -> Card:
    card = readable_card(session, user, card_id)
    views = counters.buffer()
    if not ignore_view:
        # Written off the request path (core.appdb.counters): a read commits nothing.
        views.bump(Card, card.id, add={"view_count": 1}, latest={"last_used_at": utcnow()})
        events.emit("card-read", user.id, card)
    # This process's views not written yet show at once; the card does not become dirty.
    counted, latest = views.pending(Card, card.id)
    if counted:
        set_committed_value(card, "view_count", (card.view_count or 0) + counted["view_count"])
        set_committed_value(card, "last_used_at", latest["last_used_at"])
    return card


# --------------------------------------------------------------------------------------------------
# Validating a query and a target collection
# --------------------------------------------------------------------------------------------------


def _check_collection(session: Session, user: User, collection_id: int | None) -> None:
    """404 missing, 400 in another namespace, 403 without write permission (core.content.collections)."""
    from core.content.collections import check_target

    check_target(session, user, collection_id)


def check_query(session: Session, user: User, dataset_query: dict, card_id: int | None = None) -> dict:
    """The derived columns of a query the user may run, after checking its database, its source table and
    the cards it reads (which must exist, be readable and not lead back to `card_id`)."""
    fields = query_fields(dataset_query)
    if fields["database_id"] == VIRTUAL_DATABASE:
        # Built on the Saved Questions database: the card lives on its source card's database.
        fields["database_id"] = database_of(session, dataset_query)
    if fields["database_id"] is None:
        raise Invalid({"dataset_query": "dataset_query must name its database (an integer id)."})
    database = session.get(Database, fields["database_id"])
    if database is None:
        raise Invalid({"dataset_query": f"Database {fields['database_id']} does not exist."})
    if fields["table_id"] is not None:
        table = session.get(Table, fields["table_id"])
        if table is None or table.db_id != database.id:
            raise Invalid({"dataset_query": f"Table {fields['table_id']} does not exist in database {database.id}."})
    metadata.check_structure(dataset_query)
    _check_card_references(session, user, dataset_query, card_id)
    if not perms.can_query(session, user, database.id, native=is_native(dataset_query), table_id=fields["table_id"]):
        raise Forbidden("You cannot save this Question because you do not have permissions to run its query.")
    return fields


def _check_card_references(session: Session, user: User, dataset_query: dict, card_id: int | None) -> None:
    seen: set[int] = set()
    pending = list(referenced_card_ids(dataset_query))
    while pending:
        ref = pending.pop()
        if card_id is not None and ref == card_id:
            raise Invalid({"dataset_query": "A card cannot read itself, directly or through other cards."})
        if ref in seen:
            continue
        seen.add(ref)
        other = session.get(Card, ref)
        if other is None:
            raise Invalid({"dataset_query": f"Card {ref} does not exist."})
        if not perms.can_read_item(session, user, other.collection_id):
            raise Forbidden()
        pending.extend(referenced_card_ids(other.dataset_query or {}))


def _check_metric(card_type: str, dataset_query: dict) -> None:
    if card_type == "metric" and not metadata.valid_metric(dataset_query):
        raise Invalid("Card of type metric is invalid, cannot be saved.")


def _card_type(body, current: str | None = None) -> str | None:
    fields = body.model_fields_set
    if "type" in fields and body.type is not None:
        return body.type
    if "dataset" in fields and body.dataset is not None:
        if body.dataset:
            return "model"
        return "question" if current in (None, "model") else current
    return current


# --------------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------------


def create_card(session: Session, user: User, body) -> Card:
    _check_collection(session, user, body.collection_id)
    fields = check_query(session, user, body.dataset_query)
    card_type = _card_type(body) or "question"
    _check_metric(card_type, body.dataset_query)
    result_metadata = metadata.for_save(session, user, body.dataset_query, body.result_metadata)
    card = Card(
        name=body.name, description=body.description, display=body.display, dataset_query=body.dataset_query,
        visualization_settings=body.visualization_settings, parameters=body.parameters or [],
        parameter_mappings=body.parameter_mappings or [], result_metadata=result_metadata, type=card_type,
        collection_id=body.collection_id, collection_position=body.collection_position, cache_ttl=body.cache_ttl,
        collection_preview=True if body.collection_preview is None else body.collection_preview,
        creator_id=user.id, entity_id=_entity_id(), **fields,
    )
    session.add(card)
    session.flush()
    _record(session, user, card, creation=True)
    session.commit()
    events.emit("card-create", user.id, card)
    return card


def _entity_id() -> str:
    import secrets
    import string

    alphabet = string.ascii_letters + string.digits + "_-"
    return "".join(secrets.choice(alphabet) for _ in range(21))


def update_card(session: Session, user: User, card_id: int, body) -> Card:
    card = writable_card(session, user, card_id)
    given = body.model_fields_set
    changes: dict = {}
    for key in ("name", "display", "visualization_settings", "description", "collection_position", "cache_ttl",
                "collection_preview", "archived"):
        if key in given and (getattr(body, key) is not None or key in ("description", "collection_position",
                                                                         "cache_ttl")):
            changes[key] = getattr(body, key)
    for key in ("parameters", "parameter_mappings"):
        if key in given:
            changes[key] = getattr(body, key) or []
    if "collection_id" in given and body.collection_id != card.collection_id:
        _check_collection(session, user, body.collection_id)
        changes["collection_id"] = body.collection_id
    if given & {"enable_embedding", "embedding_params"}:
        _embedding_changes(session, user, card, body, changes)
    card_type = _card_type(body, card.type)
    if card_type != card.type:
        changes["type"] = card_type
        if card_type == "model":
            changes["display"] = "table"
    query_changed = "dataset_query" in given and body.dataset_query is not None and body.dataset_query != card.dataset_query
    if query_changed:
        changes.update(check_query(session, user, body.dataset_query, card.id))
        changes["dataset_query"] = body.dataset_query
    _check_metric(changes.get("type", card.type), changes.get("dataset_query", card.dataset_query))
    if query_changed or ("result_metadata" in given and body.result_metadata is not None):
        changes["result_metadata"] = metadata.for_save(
            session, user, changes.get("dataset_query", card.dataset_query),
            body.result_metadata if "result_metadata" in given else None)
    if "archived" in changes:
        if changes["archived"] == card.archived:
            del changes["archived"]
        else:
            changes["archived_directly"] = bool(changes["archived"])
            if changes["archived"]:
                changes["collection_position"] = None
    for key, value in list(changes.items()):
        if getattr(card, key) == value:
            del changes[key]
    if not changes:
        return card
    for key, value in changes.items():
        setattr(card, key, value)
    session.flush()
    _record(session, user, card)
    session.commit()
    _release_persisted(session, card)
    events.emit("card-update", user.id, card)
    return card


def _release_persisted(session: Session, card: Card) -> None:
    """An archived model, or a model turned question, gives up its persisted table."""
    if card.type == "model" and not card.archived:
        return
    from core.query.persistence import persisted_info

    from . import persistence

    info = persisted_info(session, card)
    if info is None or info.state == "off":
        return
    try:
        persistence.unpersist(session, card)
    except Exception:  # the card change stands; the table is dropped when persistence is switched off
        session.rollback()
        log.warning("could not drop the persisted table of card %s", card.id, exc_info=True)


def _embedding_changes(session: Session, user: User, card: Card, body, changes: dict) -> None:
    given = body.model_fields_set
    wanted = {k: getattr(body, k) for k in ("enable_embedding", "embedding_params") if k in given}
    if all(getattr(card, k) == v or (k == "enable_embedding" and v is None) for k, v in wanted.items()):
        return
    if not user.is_superuser:
        raise Forbidden()
    sharing.check_embedding(session)
    if wanted.get("enable_embedding") is not None:
        changes["enable_embedding"] = wanted["enable_embedding"]
    if "embedding_params" in wanted:
        params = wanted["embedding_params"]
        if params is not None and any(v not in ("disabled", "enabled", "locked") for v in params.values()):
            raise Invalid({"embedding_params": "value must be a valid embedding params map."})
        changes["embedding_params"] = params


def archive_card(session: Session, user: User, card_id: int) -> None:
    """The deprecated DELETE: archives, as Metabase does."""
    card = writable_card(session, user, card_id)
    if card.archived:
        return
    card.archived = True
    card.archived_directly = True
    card.collection_position = None
    session.flush()
    _record(session, user, card)
    session.commit()
    _release_persisted(session, card)
    events.emit("card-update", user.id, card)


def copy_card(session: Session, user: User, card_id: int) -> Card:
    original = readable_card(session, user, card_id)
    _check_collection(session, user, original.collection_id)
    check_query(session, user, original.dataset_query or {})
    card = duplicate(session, original, user.id, name=f"Copy of {original.name}", collection_id=original.collection_id)
    session.commit()
    events.emit("card-create", user.id, card)
    return card


def move_cards(session: Session, user: User, card_ids: list[int], collection_id: int | None) -> dict:
    """Move cards to a collection (None: the root), appended after its pinned cards; one transaction."""
    _check_collection(session, user, collection_id)
    cards = []
    for card_id in dict.fromkeys(card_ids):
        card = get_card(session, card_id)
        if not perms.can_write_item(session, user, card.collection_id):
            raise Forbidden()
        cards.append(card)
    last = session.scalar(select(func.max(Card.collection_position)).where(
        Card.collection_id.is_(None) if collection_id is None else Card.collection_id == collection_id))
    position = last or 0
    for card in cards:
        if card.collection_id == collection_id:
            continue
        card.collection_id = collection_id
        if card.collection_position is not None:
            position += 1
            card.collection_position = position
        session.flush()
        _record(session, user, card)
    session.commit()
    for card in cards:
        events.emit("card-update", user.id, card)
    return {"status": "ok"}


# --------------------------------------------------------------------------------------------------
# Lists
# --------------------------------------------------------------------------------------------------


def list_cards(session: Session, user: User, f: str | None, model_id: int | None) -> list[Card]:
    f = f or "all"
    if f in ("database", "table", "using_model", "using_segment") and model_id is None:
        raise Invalid({"model_id": f"model_id is a required parameter when filter mode is '{f}'"})
    if f == "bookmarked":
        # Metabase: the caller's bookmarked cards that are not archived, by name (case-sensitive).
        marked = bookmarks.bookmarked_ids(session, user, "card")
        cards = session.scalars(select(Card).where(Card.id.in_(marked), Card.archived.is_(False))) if marked else []
        return readable(session, user, sorted(cards, key=lambda c: (c.name, c.id)))
    if f == "using_segment":
        # Metabase: the segment must be readable; its table's unarchived cards whose query names it.
        segments.fetch(session, user, Segment, model_id)
        cards = segments.cards_using_segment(session, model_id)
        return readable(session, user, sorted(cards, key=lambda c: (c.name.lower(), c.id)))
    query = select(Card).order_by(func.lower(Card.name), Card.id)
    query = query.where(Card.archived.is_(f == "archived"))
    if f == "mine":
        query = query.where(Card.creator_id == user.id)
    elif f == "database":
        query = query.where(Card.database_id == model_id)
    elif f == "table":
        query = query.where(Card.table_id == model_id)
    cards = list(session.scalars(query))
    if f == "using_model":
        check_404(session.get(Card, model_id))
        cards = [c for c in cards if model_id in referenced_card_ids(c.dataset_query or {})]
    return readable(session, user, cards)


def readable(session: Session, user: User, cards: list[Card]) -> list[Card]:
    ids = perms.readable_collection_ids(session, user)
    if ids is None:
        return cards
    root = perms.can_read_collection(session, user, None)
    return [c for c in cards if (c.collection_id in ids if c.collection_id is not None else root)]


def embeddable_cards(session: Session, user: User) -> list[dict]:
    return sharing.embeddable_items(session, user, Card)


def public_cards(session: Session, user: User) -> list[dict]:
    return sharing.public_items(session, user, Card)


# --------------------------------------------------------------------------------------------------
# Public links
# --------------------------------------------------------------------------------------------------


def create_public_link(session: Session, user: User, card_id: int) -> dict:
    return sharing.publish(session, user, lambda: get_card(session, card_id))


def delete_public_link(session: Session, user: User, card_id: int) -> None:
    sharing.unpublish(session, user, lambda: get_card(session, card_id))


# --------------------------------------------------------------------------------------------------
# Related entities (core.content.related)
# --------------------------------------------------------------------------------------------------


def related(session: Session, user: User, card_id: int) -> dict:
    card = readable_card(session, user, card_id)
    return core_related.for_card(session, user, core_related.CardLike(card.id, card.table_id, card.dataset_query))


def adhoc_related(session: Session, user: User, dataset_query: dict) -> dict:
    """Related entities of a query that is not saved; what it shows is filtered for the caller."""
    return core_related.for_card(session, user, core_related.CardLike.adhoc(dataset_query))
