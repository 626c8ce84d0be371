"""Pivot tables: one aggregated MBQL query run once per breakout grouping (the full breakout, row
subtotals, column totals, the grand total), every row tagged with a `pivot-grouping` bitmask whose
bits are the breakouts left out, as Metabase's pivot endpoint answers."""
from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import time
from typing import Any

from sqlalchemy.orm import Session

from ..models import User
from . import processor as QP
from . import results as R
from .errors import QueryFailed

PIVOT_GROUPING = {
    "name": "pivot-grouping", "display_name": "pivot-grouping", "base_type": "type/Integer",
    "effective_type": "type/Integer", "semantic_type": None, "source": "breakout",
    "field_ref": ["expression", "pivot-grouping"], "expression_name": "pivot-grouping",
}


def groupings(count: int, rows: list[int] | None, cols: list[int] | None) -> list[tuple[int, ...]]:
    """Which breakouts each sub-query keeps: all, row subtotals, column totals, grand total."""
    rows = [i for i in (rows or []) if 0 <= i < count]
    cols = [i for i in (cols or []) if 0 <= i < count and i not in rows]
    if not rows and not cols:
        rows = list(range(count))
    out: list[tuple[int, ...]] = []

    def add(indices):
        key = tuple(sorted(set(indices)))
        if key not in out:
            out.append(key)

    add(range(count))
    for k in range(len(rows) - 1, 0, -1):
        add(rows[:k] + cols)
    add(cols)
    for k in range(len(rows), 0, -1):
        add(rows[:k])
    add(())
    return out


def bitmask(count: int, kept: tuple[int, ...]) -> int:
    mask = (1 << count) - 1
    for i in kept:
        mask ^= 1 << i
    return mask


def run_pivot(session: Session, user: User | None, dataset_query: Any, pivot_rows: list[int] | None = None,
              pivot_cols: list[int] | None = None, *, context: str = "ad-hoc", **options) -> tuple[dict, int]:
    """`options` go to the processor's prepare (card_id for a saved card, ...)."""
    started_at = dt.datetime.now(dt.timezone.utc)
    started = time.monotonic()
    ctx = None
    try:
        ctx = QP.prepare(session, user, dataset_query, context=context, **options)
        if ctx.is_native or not ctx.query.last.aggregations:
            raise QueryFailed("A pivot table needs an MBQL query with aggregations.", "invalid-query")
        QP._stats(ctx)
        stage = ctx.query.last
        breakouts = list(stage.breakouts)
        count = len(breakouts)
        hook = QP._hook()
        all_rows: list[list] = []
        cols: list[dict] | None = None
        native_form = None
        for kept in groupings(count, pivot_rows, pivot_cols):
            query = copy.deepcopy(ctx.query)
            query.last.breakouts = [breakouts[i] for i in kept]
            query.last.order_by = [o for o in query.last.order_by if _keeps(o, query.last.breakouts)]
            sub = dataclasses.replace(ctx, query=query, extras={})
            result = hook.execute_query(context=sub)
            rows = list(result)
            if cols is None:
                cols = result.cols[:count] + [PIVOT_GROUPING] + result.cols[count:]
                native_form = result.native_form
            mask = bitmask(count, kept)
            position = {index: n for n, index in enumerate(kept)}
            for row in rows:
                full = [row[position[i]] if i in position else None for i in range(count)]
                all_rows.append(full + [mask] + list(row[len(kept):]))
        envelope_result = QP.Result(ctx, cols or [], iter(()), native_form)
        envelope_result.finished_at = time.monotonic()
        return QP.completed(ctx, envelope_result, all_rows), R.SUCCESS_STATUS
    except QueryFailed as exc:
        return QP.failed(dataset_query, exc, context, ctx, started_at, started), R.FAILED_STATUS


def _keeps(order_by: list, breakouts: list) -> bool:
    ref = order_by[1] if len(order_by) > 1 else None
    if isinstance(ref, list) and ref and ref[0] == "aggregation":
        return True
    return any(_same_ref(ref, b) for b in breakouts)


def _same_ref(a: Any, b: Any) -> bool:
    if not (isinstance(a, list) and isinstance(b, list) and len(a) >= 2 and len(b) >= 2):
        return False
    return a[0] == b[0] and a[1] == b[1]
