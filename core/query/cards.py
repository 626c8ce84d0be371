"""Cards inside queries: the result metadata a card is saved with, and (for the processor) the
expansion of `card__N` / `source-card` sources into the stages of the cards they name.

Kept in core because both the cards plugin (metadata on save) and the processor (every run) need it.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from ..errors import Invalid
from ..models import User

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


