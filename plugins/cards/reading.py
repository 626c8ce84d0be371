"""GET /api/card/:id: the hydrated card, kept in core.appdb.memo while the app DB is unchanged.

The hydration (permissions, creator, collection, dashboard count, query stats) reads the app DB only,
so a repeated GET by the same user under the same generation is served from the memo; the view it
counts is still put in the write-behind buffer on every GET, and the views not written yet are laid
over the stored count, as core.appdb.counters promises.
"""
from __future__ import annotations

from sqlalchemy.orm import Session

from core.appdb import memo
from core.appdb.models import Card, User
from core.assembly import events
from core.content import viewing

from . import service
from .serialize import card_json


def viewed_card_json(session: Session, user: User, card_id: int, ignore_view: bool) -> dict:
    if not ignore_view and events.has_listeners():  # listeners receive the card object
        return card_json(session, user, service.view_card(session, user, card_id, ignore_view))
    stored = memo.get_or_compute(session, ("GET card", card_id, user.id),
                                 lambda: card_json(session, user, service.readable_card(session, user, card_id)))
    return viewing.viewed_json(session, stored, Card, card_id, "last_used_at", count=not ignore_view)
