"""A card's revision history and reverting it: the card side of /api/revision (registered as the
"card" Revisable). Every card change records its revision in service.py; this reads them back and
writes a recorded state onto the card again."""
from __future__ import annotations

from sqlalchemy.orm import Session

from core.appdb.models import Card, Collection, User
from core.assembly import events
from core.content import revisions
from core.content.cards import revision_object
from core.policy import permissions as perms

from . import service

CARD = revisions.Kind(model="Card", label="Card")

# What a revert writes back: the card's content and place; never its identity, creator or public link.
REVERTIBLE = ("name", "description", "display", "dataset_query", "visualization_settings", "parameters",
              "parameter_mappings", "result_metadata", "type", "collection_id", "collection_position",
              "collection_preview", "cache_ttl", "archived", "archived_directly", "enable_embedding",
              "embedding_params")


def history(session: Session, user: User, card_id: int) -> list[dict]:
    card = service.readable_card(session, user, card_id)
    return revisions.history(session, CARD, card.id)


def revert(session: Session, user: User, card_id: int, revision_id: int) -> dict:
    """Back to the state of one of its revisions, when the caller may write the card and run the
    recorded query (Metabase checks data permissions for the reverted query); one transaction."""
    card = service.writable_card(session, user, card_id)

    def apply(state: dict) -> None:
        _restore(session, user, card, state)
        # The reversion records the card as it now is (derived columns included), not the old snapshot.
        state.clear()
        state.update(revision_object(card))

    out = revisions.revert(session, CARD, card.id, revision_id, user.id, apply)
    session.commit()
    service._release_persisted(session, card)  # a model reverted to a question gives up its table, as in PUT
    events.emit("card-update", user.id, card)
    return out


def _restore(session: Session, user: User, card: Card, state: dict) -> None:
    changes = {key: state[key] for key in REVERTIBLE if key in state}
    if not perms.is_admin(user):
        # Embedding is an administrator's setting (as in PUT): other writers' reverts leave it alone.
        changes.pop("enable_embedding", None)
        changes.pop("embedding_params", None)
    target = changes.get("collection_id", card.collection_id)
    if target != card.collection_id and ((target is not None and session.get(Collection, target) is None)
                                         or not perms.can_write_item(session, user, target)):
        # The recorded collection is gone or not the caller's to write: the card stays where it is
        # (as a dashboard's revert does).
        changes.pop("collection_id")
    query = changes.get("dataset_query") or card.dataset_query or {}
    changes.update(service.check_query(session, user, query, card.id))
    for key, value in changes.items():
        if key in ("parameters", "parameter_mappings"):
            value = value or []
        if key == "visualization_settings":
            value = value or {}
        setattr(card, key, value)
    session.flush()
