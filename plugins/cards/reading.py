"""GET /api/card/:id: the hydrated card, kept in core.appdb.memo while the tables it read are unchanged.

The hydration (permissions, creator, collection, dashboard count) reads the app DB only, so a
repeated GET by the same user is served from the memo. What changes with every run or view is laid
over it from answers of their own, so that the flush of the query log or of view counts does not
end the hydrated card: the run statistics (kept while query_execution is unchanged) and the stored
view count (core.content.viewing); the view is still put in the write-behind buffer on every GET,
and the views not written yet are laid over the stored count, as core.appdb.counters promises.
"""
from __future__ import annotations

from sqlalchemy.orm import Session

from core.appdb import memo
from core.appdb.models import Card, User
from core.assembly import events
from core.content import viewing

from . import service
from .serialize import card_json, query_stats


def viewed_card_json(session: Session, user: User, card_id: int, ignore_view: bool) -> dict:
    if not ignore_view and events.has_listeners():  # listeners receive the card object
        return card_json(session, user, service.view_card(session, user, card_id, ignore_view))
    stored = memo.get_or_compute(session, ("GET card", card_id, user.id), lambda: card_json(
        session, user, service.readable_card(session, user, card_id), run_stats=False))
    # After the card's answer (what it reads, query_execution, must not become part of the card's) and
    # alone (it depends on that table only, not on what this request read before).
    stored = {**stored, **memo.get_or_compute(session, ("card run stats", card_id),
                                              lambda: query_stats(session, card_id), alone=True)}
    return viewing.viewed_json(session, stored, Card, card_id, "last_used_at", count=not ignore_view)
