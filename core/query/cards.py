"""Cards inside queries: the result metadata a card is saved with, and (for the processor) the
expansion of `card__N` / `source-card` sources into the stages of the cards they name.

Kept in core because both the cards plugin (metadata on save) and the processor (every run) need it.
"""
from __future__ import annotations

import contextlib
import contextvars

from sqlalchemy.orm import Session

from core.http.errors import Invalid
from core.appdb.models import User
from . import access
from .mbql import Query, Stage

# Rows read to type the columns of engines that report no column types (SQLite).
METADATA_SAMPLE_ROWS = 100


def result_metadata(session: Session, user: User | None, dataset_query: dict) -> list[dict]:
    """The query's result columns in SELECT order, as Metabase's results_metadata.columns.

    The query runs with a small row cap: the columns are known from the cursor, and the first rows
    type the columns an engine leaves untyped. Invalid when the query cannot run."""
    from . import processor as QP
    from . import results as R
    from .errors import QueryFailed

    try:
        result = QP.open_query(session, user, dataset_query, context="question", max_rows=METADATA_SAMPLE_ROWS)
        with result:
            rows = [row for _, row in zip(range(METADATA_SAMPLE_ROWS), result)]
    except QueryFailed as exc:
        raise Invalid(exc.message) from None
    cols = [dict(c) for c in result.cols]
    R.infer_base_types(cols, rows)
    return R.results_metadata(cols)["columns"]


# --------------------------------------------------------------------------------------------------
# Cards as sources: `card__N` and `source-card` expanded into the stages of the card
# --------------------------------------------------------------------------------------------------

_resolving: contextvars.ContextVar[frozenset] = contextvars.ContextVar("tessera_cards_resolving", default=frozenset())

# A native source is compiled as a placeholder table; the processor splices the SQL in its place.
PLACEHOLDER = "__tessera_native_source_{}__"


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


def native_source(context, stage: Stage):
    """The tree and columns of a native first stage inside a compiled query: a placeholder table the
    processor replaces by the stage's SQL, and the columns the stage's metadata names."""
    from sqlglot import exp

    from .refs import Col

    if not stage.source_metadata:
        raise Invalid("Invalid query: the columns of the native source are unknown; save the card again.")
    natives = context.natives
    marker = PLACEHOLDER.format(len(natives))
    natives[marker] = stage.native
    tree = exp.select(exp.Star()).from_(exp.to_identifier(marker, quoted=True))
    cols = []
    for column in stage.source_metadata:
        name = column.get("name")
        if not isinstance(name, str):
            continue
        base = column.get("base_type") or "type/*"
        meta = {"name": name, "display_name": column.get("display_name") or name, "base_type": base,
                "effective_type": column.get("effective_type") or base,
                "semantic_type": column.get("semantic_type"), "source": "fields",
                "field_ref": ["field", name, {"base-type": base}]}
        field_id = column.get("id") if isinstance(column.get("id"), int) else None
        cols.append(Col(alias=name, sql=exp.column(name, quoted=True), meta=meta, field_id=field_id))
    return tree, cols


def splice(base, natives: dict, driver, render_native):
    """`base` (the compiled SQL as core.query.native.NativeSQL) with each native placeholder replaced
    by that stage's SQL (tags substituted by `render_native(native_stage) -> NativeSQL`)."""
    from . import native as N

    out = base
    for marker, stage in natives.items():
        rendered = driver.to_sql(_placeholder_select(marker))
        inner = render_native(stage)
        pieces: list = []
        for piece in out.pieces:
            if not isinstance(piece, str) or rendered not in piece:
                pieces.append(piece)
                continue
            before, after = piece.split(rendered, 1)
            pieces.extend([before, *_strip(inner).pieces, after])
        out = N.NativeSQL(pieces)
    return out


def _placeholder_select(marker: str):
    from sqlglot import exp

    return exp.select(exp.Star()).from_(exp.to_identifier(marker, quoted=True))


def _strip(sql):
    from . import native as N

    pieces = list(sql.pieces)
    while pieces and isinstance(pieces[-1], str) and not pieces[-1].strip().rstrip(";").strip():
        pieces.pop()
    if pieces and isinstance(pieces[-1], str):
        pieces[-1] = pieces[-1].rstrip().rstrip(";")
    return N.NativeSQL(pieces)
