"""Pivot tables: one aggregated MBQL query run once per breakout grouping (the full breakout, row
subtotals, column totals, the grand total), every row tagged with a `pivot-grouping` bitmask whose
bits are the breakouts left out, as Metabase's pivot endpoint answers.

Which breakouts are the pivot's rows and columns comes as indexes, or as a visualization setting
`pivot_table.column_split` resolved against the result columns (`resolve_split`); both the pivot
endpoints and the pivoted downloads (core.export.pivot) run through `collect`."""
from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import time
from typing import Any

from sqlalchemy.orm import Session

from core.appdb.models import User

from . import processor as QP
from . import results as R
from .errors import QueryFailed
from .preparation import prepare
from .result import Result

PIVOT_GROUPING = {
    "name": "pivot-grouping", "display_name": "pivot-grouping", "base_type": "type/Integer",
    "effective_type": "type/Integer", "semantic_type": None, "source": "breakout",
    "field_ref": ["expression", "pivot-grouping"], "expression_name": "pivot-grouping",
}


@dataclasses.dataclass
class Split:
    """Indexes into the result columns (pivot-grouping left out): row and column breakouts, measures."""

    rows: list[int]
    cols: list[int]
    values: list[int]


@dataclasses.dataclass
class Pivoted:
    """Every grouping's rows, raw (engine values), with the context that ran them."""

    context: Any  # core.query.context.QueryContext
    cols: list[dict]  # breakouts, pivot-grouping, aggregations
    rows: list[list]
    split: Split
    native_form: dict | None
    result: Any  # the first sub-query's Result, for timings


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


def _matches(entry: Any, column: dict) -> bool:
    """A column_split entry names a column by name (Metabase 0.50+), by field ref, or by
    ["aggregation", i] for a measure."""
    if isinstance(entry, str):
        return entry == column.get("name")
    if isinstance(entry, list) and len(entry) >= 2:
        ref = column.get("field_ref")
        if entry[0] == "aggregation":
            return column.get("aggregation_index") == entry[1] or (
                isinstance(ref, list) and ref[:2] == ["aggregation", entry[1]])
        if entry[0] == "field":
            return entry[1] in (column.get("id"), column.get("name")) or (
                isinstance(ref, list) and len(ref) >= 2 and ref[1] == entry[1])
    return False


def resolve_split(column_split: Any, columns: list[dict], count: int) -> Split:
    """Rows, columns and measures of `pivot_table.column_split` as indexes into `columns` (the
    breakouts first, `count` of them, then the aggregations). Entries naming no column are skipped,
    as Metabase does; a breakout in neither rows nor columns joins the rows (so that every grouping
    the pivot runs is one the table reads); no resolvable measure means every aggregation."""
    split = column_split if isinstance(column_split, dict) else {}

    def find(entries, candidates) -> list[int]:
        out: list[int] = []
        for entry in entries if isinstance(entries, list) else []:
            index = next((i for i in candidates if _matches(entry, columns[i])), None)
            if index is not None and index not in out:
                out.append(index)
        return out

    breakouts = range(count)
    rows = find(split.get("rows"), breakouts)
    cols = [i for i in find(split.get("columns"), breakouts) if i not in rows]
    rows += [i for i in breakouts if i not in rows and i not in cols]
    values = find(split.get("values"), range(count, len(columns))) or list(range(count, len(columns)))
    return Split(rows, cols, values)


def collect(session: Session, user: User | None, dataset_query: Any, pivot_rows: list[int] | None = None,
            pivot_cols: list[int] | None = None, *, column_split: Any = None, context: str = "ad-hoc",
            **options) -> Pivoted:
    """Run every grouping (QueryFailed when the query cannot be pivoted). With `column_split`, rows
    and columns come from it, resolved once the first sub-query has named its columns."""
    ctx = prepare(session, user, dataset_query, context=context, **options)
    try:
        return _collect(ctx, pivot_rows, pivot_cols, column_split)
    except QueryFailed as exc:
        exc.context = ctx  # the failed body names the database the query resolved to
        raise


def _collect(ctx, pivot_rows, pivot_cols, column_split) -> Pivoted:
    if ctx.is_native or not ctx.query.last.aggregations:
        raise QueryFailed("A pivot table needs an MBQL query with aggregations.", "invalid-query")
    QP.read_stats(ctx)
    stage = ctx.query.last
    breakouts = list(stage.breakouts)
    count = len(breakouts)
    all_rows: list[list] = []
    cols: list[dict] | None = None
    first = None
    split: Split | None = None
    pending = [tuple(range(count))]
    while pending:
        kept = pending.pop(0)
        query = copy.deepcopy(ctx.query)
        query.last.breakouts = [breakouts[i] for i in kept]
        query.last.order_by = [o for o in query.last.order_by if _keeps(o, query.last.breakouts)]
        # Remapped breakouts would shift the breakout positions the groupings are built on.
        sub = dataclasses.replace(ctx, query=query, extras={}, disable_remaps=True)
        result = QP.execute(sub)
        rows = list(result)
        if cols is None:
            first = result
            cols = result.cols[:count] + [PIVOT_GROUPING] + result.cols[count:]
            plain = result.cols
            if column_split is not None:
                split = resolve_split(column_split, plain, count)
            else:
                split = resolve_split({}, plain, count)
                if pivot_rows or pivot_cols:
                    split.rows = [i for i in (pivot_rows or []) if 0 <= i < count]
                    split.cols = [i for i in (pivot_cols or []) if 0 <= i < count and i not in split.rows]
            pending = groupings(count, split.rows, split.cols)[1:]
        mask = bitmask(count, kept)
        position = {index: n for n, index in enumerate(kept)}
        for row in rows:
            full = [row[position[i]] if i in position else None for i in range(count)]
            all_rows.append(full + [mask] + list(row[len(kept):]))
    return Pivoted(ctx, cols or [], all_rows, split or Split([], [], []), first.native_form if first else None,
                   first)


def run_pivot(session: Session, user: User | None, dataset_query: Any, pivot_rows: list[int] | None = None,
              pivot_cols: list[int] | None = None, *, column_split: Any = None, context: str = "ad-hoc",
              **options) -> tuple[dict, int]:
    """The pivot endpoints' (envelope, status); `options` go to the processor's prepare (card_id, ...)."""
    started_at = dt.datetime.now(dt.timezone.utc)
    started = time.monotonic()
    try:
        pivoted = collect(session, user, dataset_query, pivot_rows, pivot_cols, column_split=column_split,
                          context=context, **options)
        ctx = pivoted.context
        envelope_result = Result(ctx, pivoted.cols, iter(()), pivoted.native_form)
        envelope_result.finished_at = time.monotonic()
        return QP.completed(ctx, envelope_result, pivoted.rows), R.SUCCESS_STATUS
    except QueryFailed as exc:
        ctx = getattr(exc, "context", None)
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
