"""GET /api/card/:id: the hydrated card, kept in core.appdb.memo while the tables it read are unchanged.

The hydration (creator, collection, dashboard count) reads the app DB only and is the same for every
user, so it is kept per card; what the caller may do is laid over it per request from permission
answers kept per group set (core.policy.permissions). What changes with every run or view is laid
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
from core.http.errors import Forbidden, check_404

from . import service
from .serialize import card_facts, card_json, card_rights, lay_rights, query_stats


def viewed_card_json(session: Session, user: User, card_id: int, ignore_view: bool) -> dict:
    if not ignore_view and events.has_listeners("card-read"):  # listeners receive the card object
        return card_json(session, user, service.view_card(session, user, card_id, ignore_view))
    # Kept per card, not per user (a hundred people opening forty cards would rarely meet a kept
    # answer): what the caller may do is laid over it from permission answers kept per group set.
    facts = memo.get_or_compute(session, ("GET card", card_id), lambda: _facts(session, card_id), alone=True)
    check_404(facts)
    rights = card_rights(session, user, facts)
    if not rights["readable"]:
        raise Forbidden()
    # After the card's answer (what it reads, query_execution, must not become part of the card's) and
    # alone (it depends on that table only, not on what this request read before).
    stored = {**lay_rights(facts, rights),
              **memo.get_or_compute(session, ("card run stats", card_id), lambda: query_stats(session, card_id),
                                    alone=True)}
    return viewing.viewed_json(session, stored, Card, card_id, "last_used_at", count=not ignore_view)


def _facts(session: Session, card_id: int) -> dict | None:
    with memo.fresh_session(session) as fresh:
        card = fresh.get(Card, card_id)
        return None if card is None else card_facts(fresh, card, run_stats=False)
