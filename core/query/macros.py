"""MBQL macros: `["segment", id]` filters and `["metric", id]` aggregations replaced by what they name.

Runs on the normalised query before compilation (core.query.compiler.compile_query calls `expand`),
so every path that compiles MBQL sees plain clauses.

- A segment becomes its stored filter (segments inside it expand too; a cycle is a 400). As in
  Metabase an archived segment still expands; an unknown id is a 400. The segment's table must be
  the source table of the stage that uses it.
- A metric is a card of type "metric" (Metabase v0.50+; the legacy /api/metric entities are not
  MBQL metrics). Its first aggregation replaces the clause, with the metric's own filters folded
  into that aggregation (count -> sum of CASE 1/0, sum(x) -> sum(CASE x), *-where predicates ANDed),
  so they restrict the metric's rows only, not the whole query, as Metabase's metrics middleware
  does. The metric must be one MBQL stage over the same source table, without joins; its
  expressions are added to the stage. The column keeps the aggregation's name and shows the
  metric's name unless the clause names itself.
"""
from __future__ import annotations

import copy
from typing import Any

from sqlalchemy.orm import Session

from core.http.errors import Invalid

from .mbql import normalize
from .model import Query, Stage

# Options key carrying the metric's own aggregation, from which the compiler names the column.
METRIC_SOURCE = "tessera/metric-source"

_ROW_COUNTS = {"count": "sum", "cum-count": "cum-sum"}
_FIRST_ARG = {"avg", "cum-sum", "distinct", "max", "median", "min", "percentile", "stddev", "sum", "var"}
_PREDICATE_LAST = {"count-where", "sum-where", "distinct-where"}


def expand(session: Session, query: Query) -> Query:
    """The query with every segment and metric clause replaced (in place; also returned)."""
    for stage in query.stages:
        _expand_stage(session, stage, frozenset())
    return query


def segments_reached(session: Session, definition: Any) -> set[int]:
    """Every segment id a stored query or definition names, directly or through other segments."""
    from core.appdb.models import Segment

    found: set[int] = set()
    pending = [definition]
    while pending:
        for ident in clause_ids(pending.pop(), "segment"):
            if ident not in found:
                found.add(ident)
                segment = session.get(Segment, ident) if 0 < ident < 2**31 else None
                if segment is not None:
                    pending.append(segment.definition)
    return found


def clause_ids(value: Any, op: str) -> set[int]:
    """The ids of every `[op, id]` / `[op, {opts}, id]` clause in a stored query (legacy or MBQL 5, any depth)."""
    if isinstance(value, dict):
        return set().union(*(clause_ids(v, op) for v in value.values())) if value else set()
    if isinstance(value, list):
        out: set[int] = set()
        if value and isinstance(value[0], str) and value[0].lstrip(":").lower() == op:
            args = value[2:] if len(value) > 2 and isinstance(value[1], dict) else value[1:]
            if args and isinstance(args[0], int) and not isinstance(args[0], bool):
                out.add(args[0])
        for item in value:
            out |= clause_ids(item, op)
        return out
    return set()


def _contains(value: Any, op: str) -> bool:
    if isinstance(value, list):
        return (bool(value) and value[0] == op) or any(_contains(v, op) for v in value)
    if isinstance(value, dict):
        return any(_contains(v, op) for v in value.values())
    return False


def _expand_stage(session: Session, stage: Stage, seen: frozenset) -> None:
    for join in stage.joins:
        for inner in join.stages:
            _expand_stage(session, inner, seen)
        if join.condition is not None:
            join.condition = _segments(session, join.condition, stage, seen)
    if _contains(stage.aggregations, "metric"):
        stage.aggregations = [_metric_aggregation(session, a, stage, seen) for a in stage.aggregations]
    for attr in ("filters", "aggregations", "breakouts", "order_by"):
        value = getattr(stage, attr)
        if _contains(value, "segment"):
            setattr(stage, attr, _segments(session, value, stage, seen))
    if _contains(stage.expressions, "segment"):
        stage.expressions = {k: _segments(session, v, stage, seen) for k, v in stage.expressions.items()}


# --------------------------------------------------------------------------------------------------
# Segments
# --------------------------------------------------------------------------------------------------

def _segments(session: Session, x: Any, stage: Stage, seen: frozenset) -> Any:
    if isinstance(x, dict):
        return {k: _segments(session, v, stage, seen) for k, v in x.items()}
    if not isinstance(x, list):
        return x
    if x and x[0] == "segment":
        return _segment_filter(session, x, stage, seen)
    return [_segments(session, item, stage, seen) for item in x]


def _segment_filter(session: Session, clause: list, stage: Stage, seen: frozenset) -> Any:
    from core.appdb.models import Segment

    ident = clause[1] if len(clause) == 2 else None
    if isinstance(ident, bool) or not isinstance(ident, int):
        raise Invalid(f"Invalid MBQL: a segment is referred to by its id, got {clause!r}.")
    key = ("segment", ident)
    if key in seen:
        raise Invalid("Segment expansion failed. Check mutually recursive segment definitions.")
    segment = session.get(Segment, ident) if 0 < ident < 2**31 else None
    if segment is None:
        raise Invalid(f"Segment {ident} does not exist, or is invalid.")
    if stage.source_table != segment.table_id:
        raise Invalid(f"Segment {ident} filters table {segment.table_id}; it can only be used in a query "
                      f"whose source table is that table.")
    filters = definition_stage(session, segment.definition, segment.table_id).filters
    if not filters:
        raise Invalid(f"Segment {ident} does not exist, or is invalid.")
    condition = filters[0] if len(filters) == 1 else ["and", *filters]
    return _segments(session, condition, stage, seen | {key})


def definition_stage(session: Session, definition: Any, table_id: int) -> Stage:
    """The one stage a stored segment or legacy-metric definition means over its table (normalised)."""
    from core.appdb.models import Table

    table = session.get(Table, table_id)
    if table is None:
        raise Invalid(f"Table {table_id} does not exist.")
    query = normalize(definition_query(definition, table.id, table.db_id))
    if len(query.stages) != 1 or query.stages[0].native is not None:
        raise Invalid("Invalid definition: it must be one MBQL stage over its table.")
    stage = query.stages[0]
    if stage.source_table != table.id:
        raise Invalid(f"Invalid definition: its source table must be table {table.id}.")
    return stage


def definition_query(definition: Any, table_id: int, database_id: int) -> dict:
    """A whole dataset_query from a definition: a legacy fragment (`{"filter": ...}`, Metabase's stored
    form) gets the table as its source; a whole legacy or MBQL 5 query is taken as it is."""
    if not isinstance(definition, dict):
        raise Invalid("Invalid definition: it must be a map.")
    if "stages" in definition or definition.get("lib/type") == "mbql/query" or "query" in definition:
        return {**definition, "database": database_id}
    fragment = {k: v for k, v in definition.items() if k not in ("source-table", "source_table")}
    source = definition.get("source-table", definition.get("source_table", table_id))
    if source != table_id:
        raise Invalid(f"Invalid definition: its source table must be table {table_id}.")
    return {"database": database_id, "type": "query", "query": {"source-table": table_id, **fragment}}


# --------------------------------------------------------------------------------------------------
# Metrics (cards of type "metric")
# --------------------------------------------------------------------------------------------------

def _metric_aggregation(session: Session, clause: Any, stage: Stage, seen: frozenset) -> Any:
    if isinstance(clause, list) and clause and clause[0] == "metric":
        replacement, names = _metric(session, clause, stage, seen)
        return ["aggregation-options", replacement, names]
    if (isinstance(clause, list) and len(clause) == 3 and clause[0] == "aggregation-options"
            and isinstance(clause[1], list) and clause[1] and clause[1][0] == "metric"):
        replacement, names = _metric(session, clause[1], stage, seen)
        opts = clause[2] if isinstance(clause[2], dict) else {}
        return ["aggregation-options", replacement, {**names, **{k: v for k, v in opts.items() if v}}]
    return _nested_metrics(session, clause, stage, seen)


def _nested_metrics(session: Session, x: Any, stage: Stage, seen: frozenset) -> Any:
    """Metrics inside arithmetic over aggregations: replaced without naming the column."""
    if not isinstance(x, list):
        return x
    if x and x[0] == "metric":
        return _metric(session, x, stage, seen)[0]
    return [_nested_metrics(session, item, stage, seen) for item in x]


def _metric(session: Session, clause: list, stage: Stage, seen: frozenset) -> tuple[Any, dict]:
    from core.appdb.models import Card

    ident = clause[1] if len(clause) == 2 else None
    if isinstance(ident, bool) or not isinstance(ident, int):
        raise Invalid(f"Invalid MBQL: a metric is referred to by its card id, got {clause!r}.")
    key = ("metric", ident)
    if key in seen:
        raise Invalid(f"Invalid MBQL: metric {ident} refers to itself.")
    card = session.get(Card, ident) if 0 < ident < 2**31 else None
    if card is None or card.type != "metric":
        raise Invalid(f"Metric {ident} does not exist, or is invalid.")
    try:
        metric_query = normalize(card.dataset_query or {})
    except Invalid:
        raise Invalid(f"Metric {ident} does not exist, or is invalid.") from None
    if len(metric_query.stages) != 1 or metric_query.stages[0].native is not None:
        raise Invalid(f"Incompatible metric: metric {ident} is not one query stage over a table.")
    metric = metric_query.stages[0]
    if metric.source_table is None or metric.source_table != stage.source_table:
        raise Invalid(f"Incompatible metric: metric {ident} is over table {metric.source_table}, "
                      f"not this query's source table.")
    if metric.joins:
        raise Invalid(f"Incompatible metric: metric {ident} joins other tables.")
    if not metric.aggregations:
        raise Invalid(f"Metric {ident} does not exist, or is invalid.")
    _expand_stage(session, metric, seen | {key})
    for name, expression in metric.expressions.items():
        if name in stage.expressions and stage.expressions[name] != expression:
            raise Invalid(f"Incompatible metric: metric {ident} defines expression {name!r} differently.")
        stage.expressions[name] = copy.deepcopy(expression)
    aggregation = copy.deepcopy(metric.aggregations[0])
    names: dict = {}
    if isinstance(aggregation, list) and aggregation and aggregation[0] == "aggregation-options":
        names = {k: v for k, v in (aggregation[2] or {}).items() if k in ("name", "display-name") and v}
        aggregation = aggregation[1]
    names.setdefault("display-name", card.name)
    names[METRIC_SOURCE] = copy.deepcopy(aggregation)
    filters = metric.filters
    if filters:
        condition = filters[0] if len(filters) == 1 else ["and", *filters]
        aggregation = _restrict(aggregation, condition)
    return aggregation, names


def _restrict(x: Any, condition: list) -> Any:
    """Every aggregation inside `x` counted only over rows matching `condition`."""
    if not isinstance(x, list) or not x or not isinstance(x[0], str):
        return x
    op, args = x[0], x[1:]
    if op in _ROW_COUNTS and not args:
        return [_ROW_COUNTS[op], ["case", [[copy.deepcopy(condition), 1]], {"default": 0}]]
    if op in ("count", "cum-count"):
        return [op, ["case", [[copy.deepcopy(condition), args[0]]], {}]]
    if op == "share":
        return ["/", ["count-where", ["and", args[0], copy.deepcopy(condition)]],
                ["count-where", copy.deepcopy(condition)]]
    if op in _PREDICATE_LAST:
        return [op, *args[:-1], ["and", args[-1], copy.deepcopy(condition)]]
    if op in _FIRST_ARG:
        return [op, ["case", [[copy.deepcopy(condition), args[0]]], {}], *args[1:]]
    return [op, *(_restrict(a, condition) for a in args)]
