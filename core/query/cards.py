"""Cards inside queries: the expansion of `card__N` / `source-card` sources into the stages of the
cards they name, behind the data-access gate (core.query.access), once per query; and a model's
edited column metadata, which the columns leaving the model's own query take (its own runs and every
query on it), as Metabase's model metadata does.
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


def card_stages(session: Session, user: User | None, card_id: int, database_id: int, *, saved: bool,
                persisted: bool = True) -> list[Stage]:
    """The stages a card's result comes from (its own sources expanded): its persisted table while
    that is fresh, else its query. A native first stage carries the card's result_metadata. The card
    passes the data-access gate first (core.query.access.card_source); its own sources are
    authorised by it. `persisted=False` reads the card's query even when a persisted table is fresh
    (a restricted viewer: the table holds every row)."""
    from . import persistence
    from .mbql import normalize

    card = access.card_source(session, user, card_id, database_id, saved=saved)
    with resolving(card_id):
        table = persistence.persisted_source(session, card) if persisted else None
        if table is not None:
            return [Stage(native={"query": table, "template-tags": {}}, source_metadata=card.result_metadata,
                          model_metadata=model_metadata(card))]
        inner = expand(session, user, normalize(card.dataset_query), saved=True, persisted=persisted)
    stages = inner.stages
    if stages[0].native is not None and len(stages) == 1:
        stages[0].source_metadata = card.result_metadata
    stages[-1].model_metadata = model_metadata(card)
    return stages


def expand(session: Session, user: User | None, query: Query, *, saved: bool, persisted: bool = True) -> Query:
    """The query with every card source (first stage and joins, at any depth) replaced by the card's
    stages, so the compiler sees tables and native SQL only. The one place cards are expanded: each
    card passes the gate here (`saved`: the query is a saved question the caller checked)."""
    query.stages = _expand_stages(session, user, query.stages, query.database, saved, persisted)
    return query


def _expand_stages(session: Session, user: User | None, stages: list[Stage], database_id: int,
                   saved: bool, persisted: bool = True) -> list[Stage]:
    for stage in stages:
        for join in stage.joins:
            join.stages = _expand_stages(session, user, join.stages, database_id, saved, persisted)
    first = stages[0]
    if first.source_card is None:
        return stages
    source = card_stages(session, user, first.source_card, database_id, saved=saved, persisted=persisted)
    first.source_card = None
    return [*source, *stages]


# --------------------------------------------------------------------------------------------------
# Models' metadata: what a user edited on a model's columns, applied where the model's query ends
# --------------------------------------------------------------------------------------------------

# Metabase's model-preserved-keys: what a model's metadata may change on a column. The types are the
# query's (base_type and effective_type are never taken); a native model may also name the field a
# column is (`id`), which links it to the field's values and remapping.
MODEL_KEYS = ("display_name", "description", "semantic_type", "fk_target_field_id", "settings", "visibility_type")


def model_metadata(card) -> list | None:
    """The metadata a card's columns take from it: a model's result_metadata; None for other cards
    (Metabase keeps no edits of a saved question's columns)."""
    if card is None or card.type != "model" or not isinstance(card.result_metadata, list):
        return None
    return card.result_metadata or None


def own_model_metadata(session: Session, card_id: int | None) -> list | None:
    """The model metadata of a run of card `card_id`'s own query (None unless the card is a model)."""
    if card_id is None or not 0 < card_id < 2**31:
        return None
    from core.appdb import rows
    from core.appdb.models import Card

    return model_metadata(rows.get(session, Card, card_id))


def apply_model_metadata(cols: list[dict], metadata: list, native: bool) -> None:
    """Overlay a model's metadata on the columns its query returns, matched by name, in place: the
    keys of MODEL_KEYS the model's column sets (a null leaves the computed value), plus `id` for a
    native model. A column bucketed by a temporal unit or binned keeps its suffix (": Month")."""
    by_name = {c["name"]: c for c in metadata if isinstance(c, dict) and isinstance(c.get("name"), str)}
    keys = (*MODEL_KEYS, "id") if native else MODEL_KEYS
    for col in cols:
        edited = by_name.get(col.get("name"))
        if edited is None:
            continue
        computed_name = col.get("display_name")
        for key in keys:
            value = edited.get(key)
            if value is not None and (key != "id" or isinstance(value, int)):
                col[key] = value
        name = col.get("display_name")
        bucketed = col.get("unit") not in (None, "default") or col.get("binning_info") is not None
        if bucketed and isinstance(computed_name, str) and ": " in computed_name and name != computed_name:
            suffix = ": " + computed_name.rsplit(": ", 1)[1]
            if isinstance(name, str) and not name.endswith(suffix):
                col["display_name"] = name + suffix
