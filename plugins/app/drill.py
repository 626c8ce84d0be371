"""Drill-through as MBQL (issue 31 item 4): what a click on a chart's bar or point or a table's cell
turns the question's query into, as Metabase's drills do. Pure functions over a legacy MBQL
dataset_query and the result columns the API answered (their `field_ref`, `source`, `unit`,
`binning_info`); the menu that offers them is drill_menu.py.

- view_rows: the underlying records: aggregation, breakout, order and limit removed, a filter per
  clicked dimension value (a temporal one on its unit's period, a binned one on its bin, null as
  is-null).
- break_out: the clicked dimension values as filters, the aggregation kept, the breakout replaced by
  another column (time by month, coordinates binned, as Metabase's breakout drill defaults).
- zoom_in: the clicked period as a filter, its breakout one temporal unit finer.
- filter_cell: =, !=, <, > on a cell's value; on an aggregation's column the query is wrapped in one
  more stage that filters its result, as Metabase filters a summary.

Only a one-stage query that reads a table or a saved question is drilled (`drillable`); the API runs
and checks whatever comes out.
"""
from __future__ import annotations

import copy
from typing import Any

# Metabase's zoom-in order (lib.drill-thru.zoom-in-timeseries).
FINER = {"year": "quarter", "quarter": "month", "month": "week", "week": "day", "day": "hour", "hour": "minute"}
OPERATORS = ("=", "!=", "<", ">")
TIME_TYPES = frozenset({"type/Date", "type/DateTime", "type/DateTimeWithTZ", "type/DateTimeWithLocalTZ", "type/Time",
                        "type/Instant"})
ORDERED_TYPES = frozenset({"type/Number", "type/Integer", "type/BigInteger", "type/Float", "type/Decimal"}) | TIME_TYPES


class NotDrillable(ValueError):
    """The query or the click is not one these drills apply to (the message says why)."""


def drillable(dataset_query: Any) -> bool:
    """A legacy MBQL query of one stage over a table or a saved question (source-table "card__N")."""
    inner = dataset_query.get("query") if isinstance(dataset_query, dict) else None
    return (dataset_query.get("type") == "query" and isinstance(inner, dict) and "source-query" not in inner
            and ("source-table" in inner))


def aggregated(dataset_query: dict) -> bool:
    inner = dataset_query.get("query") or {}
    return bool(inner.get("aggregation") or inner.get("breakout"))


def _inner(dataset_query: dict) -> dict:
    if not drillable(dataset_query):
        raise NotDrillable("Only questions built with the query builder on one table can be drilled into.")
    return copy.deepcopy(dataset_query["query"])


def with_sources(dataset_query: dict, cols: list[dict]) -> list[dict]:
    """The columns with `source` ("breakout", "aggregation", "fields"), which a card's result_metadata
    leaves out (as Metabase's does): read from their field_ref against the query's breakouts."""
    breakouts = ((dataset_query.get("query") or {}).get("breakout") or []) if isinstance(dataset_query, dict) else []
    out = []
    for col in cols:
        ref = col.get("field_ref")
        if col.get("source"):
            out.append(col)
        elif isinstance(ref, list) and ref[:1] == ["aggregation"]:
            out.append({**col, "source": "aggregation"})
        else:
            out.append({**col, "source": "breakout" if ref in breakouts else "fields"})
    return out


def _ref(col: dict) -> list:
    ref = col.get("field_ref")
    if not isinstance(ref, list) or not ref or ref[0] not in ("field", "expression"):
        raise NotDrillable(f"The column “{col.get('display_name') or col.get('name')}” cannot be filtered.")
    return copy.deepcopy(ref)


def _options(ref: list) -> dict:
    return ref[2] if len(ref) > 2 and isinstance(ref[2], dict) else {}


def dimension_filter(col: dict, value: Any) -> list:
    """The filter selecting the rows a breakout value stands for."""
    ref = _ref(col)
    if value is None:
        return ["is-null", ref]
    options = _options(ref)
    width = (col.get("binning_info") or {}).get("bin_width")
    if "binning" in options and isinstance(width, (int, float)) and isinstance(value, (int, float)):
        plain = [ref[0], ref[1], {k: v for k, v in options.items() if k != "binning"} or None]
        return ["between", plain, value, value + width]
    return ["=", ref, value]


def _and(inner: dict, filters: list[list]) -> None:
    """Adds `filters` to the stage's filter, flattened into one "and" as Metabase writes them."""
    existing = inner.get("filter")
    clauses = ([] if not existing else existing[1:] if existing[0] == "and" else [existing]) + filters
    if clauses:
        inner["filter"] = clauses[0] if len(clauses) == 1 else ["and", *clauses]


def _dimension_filters(dims: list[tuple[dict, Any]]) -> list[list]:
    return [dimension_filter(col, value) for col, value in dims if col.get("source") == "breakout"]


def view_rows(dataset_query: dict, dims: list[tuple[dict, Any]]) -> dict:
    """The records behind a summarized value: the clicked dimensions as filters, the summary gone."""
    inner = _inner(dataset_query)
    if not aggregated(dataset_query):
        raise NotDrillable("This question already shows its rows.")
    for key in ("aggregation", "breakout", "order-by", "limit"):
        inner.pop(key, None)
    _and(inner, _dimension_filters(dims))
    return {**dataset_query, "query": inner}


def break_out(dataset_query: dict, dims: list[tuple[dict, Any]], ref: list) -> dict:
    """The same summary of the clicked dimension's rows, grouped by `ref` instead."""
    inner = _inner(dataset_query)
    if not inner.get("aggregation"):
        raise NotDrillable("Only a summarized question can be broken out.")
    inner.pop("order-by", None)
    _and(inner, _dimension_filters(dims))
    inner["breakout"] = [ref]
    return {**dataset_query, "query": inner}


def temporal_dimension(dims: list[tuple[dict, Any]]) -> tuple[dict, Any] | None:
    """The clicked dimension a zoom applies to: a breakout by a temporal unit that has a finer one."""
    for col, value in dims:
        unit = _options(col.get("field_ref") or []).get("temporal-unit")
        if col.get("source") == "breakout" and unit in FINER and value is not None:
            return col, value
    return None


def zoom_in(dataset_query: dict, dims: list[tuple[dict, Any]]) -> dict:
    """The clicked period alone, its breakout one unit finer (a month's bars become its weeks)."""
    found = temporal_dimension(dims)
    if found is None:
        raise NotDrillable("Only a point of a question grouped by a period of time can be zoomed into.")
    col, value = found
    inner = _inner(dataset_query)
    ref = _ref(col)
    unit = _options(ref)["temporal-unit"]
    finer = [ref[0], ref[1], {**_options(ref), "temporal-unit": FINER[unit]}]
    breakouts = inner.get("breakout") or []
    if ref not in breakouts:
        raise NotDrillable("The clicked period is not one of the question's groups.")
    inner["breakout"] = [finer if one == ref else one for one in breakouts]
    inner.pop("order-by", None)
    _and(inner, [["=", ref, value]])
    return {**dataset_query, "query": inner}


def ordered(col: dict) -> bool:
    kind = str(col.get("effective_type") or col.get("base_type") or "")
    return kind in ORDERED_TYPES


def filter_cell(dataset_query: dict, col: dict, value: Any, operator: str) -> dict:
    """The question's rows (or summary rows) whose `col` compares to the cell's `value` by `operator`."""
    if operator not in OPERATORS:
        raise NotDrillable("A cell filters by =, !=, < or >.")
    if operator in ("<", ">") and (value is None or not ordered(col)):
        raise NotDrillable("Only numbers and dates are filtered by < or >.")
    inner = _inner(dataset_query)
    if col.get("source") == "aggregation":
        ref = ["field", col.get("name"), {"base-type": col.get("base_type") or "type/*"}]
        return {**dataset_query, "query": {"source-query": inner, "filter": _compare(operator, ref, value)}}
    _and(inner, [_compare(operator, _ref(col), value)])
    return {**dataset_query, "query": inner}


def _compare(operator: str, ref: list, value: Any) -> list:
    if value is None:
        return ["is-null" if operator == "=" else "not-null", ref]
    return [operator, ref, value]


# -- the columns a summary can be broken out by ----------------------------------------------------------

LOCATION = frozenset({"type/City", "type/State", "type/Country", "type/ZipCode", "type/Address"})
COORDINATES = frozenset({"type/Latitude", "type/Longitude"})
CATEGORY = frozenset({"type/Category", "type/Name", "type/Title", "type/Product", "type/Company",
                      "type/Source", "type/Enum"})
GROUPS = ("Category", "Time", "Location")


def breakout_choices(fields: list[dict], taken: list[list]) -> dict[str, list[tuple[str, list]]]:
    """A table's fields (GET /api/table/:id/query_metadata) grouped as Metabase's breakout drill offers
    them: {group: [(display name, field ref)]}, leaving out those the question already groups by."""
    taken_ids = {ref[1] for ref in taken if isinstance(ref, list) and len(ref) > 1}
    groups: dict[str, list[tuple[str, list]]] = {name: [] for name in GROUPS}
    for one in fields:
        if one.get("id") in taken_ids or one.get("visibility_type") in ("sensitive", "retired", "hidden"):
            continue
        semantic = one.get("semantic_type") or ""
        kind = one.get("effective_type") or one.get("base_type") or ""
        name = str(one.get("display_name") or one.get("name"))
        if kind in TIME_TYPES and kind != "type/Time":  # a time of day has no months
            groups["Time"].append((name, ["field", one["id"], {"temporal-unit": "month"}]))
        elif semantic in COORDINATES:
            groups["Location"].append((name, ["field", one["id"], {"binning": {"strategy": "default"}}]))
        elif semantic in LOCATION:
            groups["Location"].append((name, ["field", one["id"], None]))
        elif semantic in CATEGORY or (kind == "type/Text" and semantic not in ("type/PK", "type/FK")):
            groups["Category"].append((name, ["field", one["id"], None]))
    return {name: choices for name, choices in groups.items() if choices}
