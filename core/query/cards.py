"""Cards inside queries: the expansion of `card__N` / `source-card` sources into the stages of the
cards they name, behind the data-access gate (core.query.access), once per query.
"""
from __future__ import annotations

import contextlib
import contextvars

from sqlalchemy.orm import Session

from core.appdb.models import User
from core.http.errors import Invalid

from . import access
from .model import Query, Stage

# --------------------------------------------------------------------------------------------------
# Cards as sources: `card__N` and `source-card` expanded into the stages of the card
# --------------------------------------------------------------------------------------------------

_resolving: contextvars.ContextVar[frozenset] = contextvars.ContextVar("tessera_cards_resolving", default=frozenset())

# A native source is compiled as a placeholder table; the processor splices the SQL in its place.


@contextlib.contextmanager
def resolving(card_id: int):
    """Guard one level of card resolution: a card met again on the way down is a cycle (400)."""
    seen = _resolving.get()
    if card_id in seen:
        raise Invalid(f"Invalid query: card {card_id} reads itself through other cards.")
    token = _resolving.set(seen | {card_id})
    try:
        yield
    finally:
        _resolving.reset(token)


def card_stages(session: Session, user: User | None, card_id: int, database_id: int, *, saved: bool) -> list[Stage]:
    """The stages a card's result comes from (its own sources expanded): its persisted table while
    that is fresh, else its query. A native first stage carries the card's result_metadata. The card
    passes the data-access gate first (core.query.access.card_source); its own sources are
    authorised by it."""
    from . import persistence
    from .mbql import normalize

    card = access.card_source(session, user, card_id, database_id, saved=saved)
    with resolving(card_id):
        persisted = persistence.persisted_source(session, card)
        if persisted is not None:
            return [Stage(native={"query": persisted, "template-tags": {}}, source_metadata=card.result_metadata)]
        inner = expand(session, user, normalize(card.dataset_query), saved=True)
    stages = inner.stages
    if stages[0].native is not None and len(stages) == 1:
        stages[0].source_metadata = card.result_metadata
    return stages


def expand(session: Session, user: User | None, query: Query, *, saved: bool) -> Query:
    """The query with every card source (first stage and joins, at any depth) replaced by the card's
    stages, so the compiler sees tables and native SQL only. The one place cards are expanded: each
    card passes the gate here (`saved`: the query is a saved question the caller checked)."""
    query.stages = _expand_stages(session, user, query.stages, query.database, saved)
    return query


def _expand_stages(session: Session, user: User | None, stages: list[Stage], database_id: int,
                   saved: bool) -> list[Stage]:
    for stage in stages:
        for join in stage.joins:
            join.stages = _expand_stages(session, user, join.stages, database_id, saved)
    first = stages[0]
    if first.source_card is None:
        return stages
    source = card_stages(session, user, first.source_card, database_id, saved=saved)
    first.source_card = None
    return [*source, *stages]
