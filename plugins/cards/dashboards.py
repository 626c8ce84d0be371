"""The dashboards a card appears on (GET /api/card/:id/dashboards), asked of the dashboards plugin's
content kind through core.content.kinds: none while that plugin is disabled."""
from __future__ import annotations

from sqlalchemy.orm import Session

from core.appdb.models import User
from core.content import kinds
from core.content.collections import Access

from .service import readable_card


def card_dashboards(session: Session, user: User, card_id: int) -> list[dict]:
    """Metabase's `in_dashboards` of a readable card (dashcards and series), by dashboard id, reduced to
    the dashboards the caller may read: Metabase refuses the whole list when one is not writable,
    here a hidden dashboard is left out, so a card shared by a private dashboard stays usable."""
    readable_card(session, user, card_id)
    holders = kinds.lookup(session, "dashboard", kinds.card_holders(session, "dashboard", card_id))
    access = Access(session, user)
    return [{"id": d.id, "name": d.name} for _, d in sorted(holders.items()) if access.can_read(d.collection_id)]
