"""What each step of the question builder offers, from what the API describes to the page's user: the
columns a stage reads (the source table's or saved question's fields from GET
/api/table/:id/query_metadata, a joined table's under its alias, or the columns the previous stage
returns, read from POST /api/dataset with no rows), each column's kind (which filter widget, which
groupings), and the aggregations and join types the database's `features` allow.

A column is offered by its MBQL ref, and a change is accepted only for a ref among those offered, so the
page builds nothing the API was not shown to take.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import orjson

from core.http.internal import call

from .notebook_query import BadQuery, is_card_source, stages

NUMERIC = ("type/Integer", "type/BigInteger", "type/Float", "type/Decimal", "type/Number")
TEMPORAL = ("type/Date", "type/DateTime", "type/DateTimeWithTZ", "type/DateTimeWithLocalTZ",
            "type/DateTimeWithZoneOffset", "type/DateTimeWithZoneID", "type/Time", "type/TimeWithTZ",
            "type/TimeWithLocalTZ", "type/TimeWithZoneOffset", "type/Instant")
COORDINATES = ("type/Latitude", "type/Longitude")
DATE_UNITS = ("day", "week", "month", "quarter", "year", "day-of-week", "month-of-year", "quarter-of-year")
TIME_UNITS = ("minute", "hour", "hour-of-day")
UNIT_LABELS = {"day-of-week": "Day of week", "month-of-year": "Month of year", "quarter-of-year": "Quarter of year",
               "hour-of-day": "Hour of day"}


@dataclass
class Column:
    """A column a stage reads: its ref, what people read, and what its type makes of it."""

    ref: list
    label: str
    base_type: str
    semantic_type: str | None = None
    field_id: int | None = None
    list_values: bool = False
    fk_target_field_id: int | None = None
    groupings: list[tuple[str, list]] = field(default_factory=list)

    @property
    def value(self) -> str:
        return orjson.dumps(self.ref).decode()

    @property
    def kind(self) -> str:
        """The filter widget: "date", "number", "boolean", "category" (a list of values) or "text"."""
        if self.base_type in TEMPORAL:
            return "date"
        if self.base_type == "type/Boolean":
            return "boolean"
        if self.base_type in NUMERIC:
            return "number"
        return "category" if self.list_values and self.field_id is not None else "text"

    @property
    def own(self) -> bool:
        """A column of the data itself, not of a joined table nor reached through a foreign key."""
        options = self.ref[2] if len(self.ref) > 2 and isinstance(self.ref[2], dict) else {}
        return self.ref[0] == "field" and not options.get("join-alias") and not options.get("source-field")

    @property
    def time_only(self) -> bool:
        return self.base_type.startswith("type/Time")


@dataclass
class Source:
    """The database and what it allows, and the columns of each stage of the query."""

    database: int
    features: tuple[str, ...]
    name: str
    columns: list[list[Column]]
    tables: dict = field(default_factory=dict)  # id -> query_metadata of the source and joined tables


def metadata(table) -> dict:
    """GET /api/table/:id/query_metadata (a table, or a saved question as card__N), as this user may read it."""
    answer = call("GET", f"/api/table/{table}/query_metadata")
    if not answer.ok or not isinstance(answer.body, dict):
        status = answer.status if 400 <= answer.status < 500 else 400
        raise Unreadable(status, "You may not read this data, or it is not there any more."
                         if status in (403, 404) else (answer.message or "The data's description could not be read."))
    return answer.body


class Unreadable(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def field_columns(meta: dict, alias: str | None = None, stage_zero_binning: bool = True) -> list[Column]:
    """A table's (or saved question's) fields as columns; a joined table's are under its alias."""
    out = []
    card = is_card_source(meta.get("id"))
    for f in meta.get("fields") or []:
        if not isinstance(f, dict) or f.get("visibility_type") in ("sensitive", "retired"):
            continue
        base_type = str(f.get("effective_type") or f.get("base_type") or "type/*")
        field_id = f.get("id") if isinstance(f.get("id"), int) else None
        ref = f.get("field_ref") if card and isinstance(f.get("field_ref"), list) else ["field", field_id, None]
        if ref[1] is None:
            ref = ["field", f.get("name"), {"base-type": base_type}]
        if alias:
            ref = ["field", ref[1], {**(ref[2] or {}), "join-alias": alias}]
        label = str(f.get("display_name") or f.get("name"))
        out.append(Column(ref=ref, label=f"{alias} → {label}" if alias else label, base_type=base_type,
                          semantic_type=f.get("semantic_type"), field_id=field_id,
                          list_values=f.get("has_field_values") == "list",
                          fk_target_field_id=f.get("fk_target_field_id")))
    return out


def linked_columns(columns: list[Column], tables: dict) -> list[Column]:
    """The columns of the tables the data's foreign keys point at, reached without a join (Metabase's
    implicit joins: `["field", target, {"source-field": fk}]`), named "Product → Category"."""
    out = []
    for column in columns:
        if column.fk_target_field_id is None or column.field_id is None or not column.own:
            continue
        target = call("GET", f"/api/field/{column.fk_target_field_id}")
        table_id = target.body.get("table_id") if target.ok and isinstance(target.body, dict) else None
        if not isinstance(table_id, int):
            continue  # a key to a table this user may not read offers nothing
        if table_id not in tables:
            answer = call("GET", f"/api/table/{table_id}/query_metadata")
            if not answer.ok or not isinstance(answer.body, dict):
                continue
            tables[table_id] = answer.body
        via = column.label[:-3] if column.label.endswith(" ID") else column.label
        for linked in field_columns(tables[table_id]):
            if linked.field_id is None:
                continue
            linked.ref = ["field", linked.field_id, {"source-field": column.field_id}]
            linked.label = f"{via} → {linked.label}"
            linked.fk_target_field_id = None
            out.append(linked)
    return out


def result_columns(dataset_query: dict, index: int) -> list[Column]:
    """The columns stage `index` returns, as the API answers the query up to it with no rows."""
    from .notebook_query import rebuilt

    parts = stages(dataset_query)
    query = rebuilt(dataset_query, [*parts[:index], {**parts[index], "limit": 0}])
    answer = call("POST", "/api/dataset", json=query)
    body = answer.body if isinstance(answer.body, dict) else {}
    if not answer.ok or body.get("error"):
        raise Unreadable(answer.status if 400 <= answer.status < 500 else 400,
                         str(body.get("error") or answer.message or "The stage below could not run."))
    cols = (body.get("data") or {}).get("cols") or []
    return [Column(ref=["field", c.get("name"), {"base-type": c.get("base_type") or "type/*"}],
                   label=str(c.get("display_name") or c.get("name")), base_type=str(c.get("base_type") or "type/*"),
                   semantic_type=c.get("semantic_type")) for c in cols]


def expression_columns(dataset_query: dict, index: int) -> list[Column]:
    """Stage `index`'s custom columns (["expression", name]), typed as the API answers the stage's data,
    joins and custom columns with no rows; its refusal (a clause it cannot compile) is Unreadable."""
    from .notebook_query import expressions_of, rebuilt

    parts = stages(dataset_query)
    names = list(expressions_of(parts[index]))
    if not names:
        return []
    kept = {k: v for k, v in parts[index].items() if k in ("source-table", "joins", "expressions")}
    query = rebuilt(dataset_query, [*parts[:index], {**kept, "fields": [["expression", n] for n in names], "limit": 0}])
    answer = call("POST", "/api/dataset", json=query)
    body = answer.body if isinstance(answer.body, dict) else {}
    if not answer.ok or body.get("error"):
        raise Unreadable(answer.status if 400 <= answer.status < 500 else 400,
                         "A custom column cannot be computed: " + str(body.get("error") or answer.message or "the query was refused."))
    cols = {c.get("name"): c for c in (body.get("data") or {}).get("cols") or [] if isinstance(c, dict)}
    out = []
    for name in names:
        col = cols.get(name) or {}
        base_type = str(col.get("base_type") or "type/*")
        out.append(Column(ref=["expression", name], label=str(name), base_type=base_type))
    return out


def describe(dataset_query: dict) -> Source:
    """The database's features and each stage's columns, with the groupings each column offers."""
    parts = stages(dataset_query)
    first = parts[0]
    source = metadata(first["source-table"])
    if source.get("db_id") != dataset_query["database"]:
        raise BadQuery("The query's data is not in the query's database.")
    features = tuple((source.get("db") or {}).get("features") or ())
    tables = {first["source-table"]: source}
    columns = field_columns(source)
    columns += linked_columns(columns, tables)
    for join in first.get("joins") or []:
        if not isinstance(join, dict) or not join.get("source-table") or not join.get("alias"):
            raise BadQuery("A join of this query has no table or alias the builder can read.")
        meta = tables.get(join["source-table"]) or metadata(join["source-table"])
        tables[join["source-table"]] = meta
        columns += field_columns(meta, alias=str(join["alias"]))
    by_stage = [columns + expression_columns(dataset_query, 0)]
    for index in range(1, len(parts)):
        by_stage.append(result_columns(dataset_query, index - 1) + expression_columns(dataset_query, index))
    binning = "binning" in features
    for index, stage_columns in enumerate(by_stage):
        for column in stage_columns:
            column.groupings = groupings(column, binning and index == 0)
    return Source(database=dataset_query["database"], features=features,
                  name=str(source.get("display_name") or source.get("name")), columns=by_stage, tables=tables)


def groupings(column: Column, binning: bool) -> list[tuple[str, list]]:
    """A breakout's choices for a column: (label, ref) — time units for dates, bins for numbers and
    coordinates (where the driver bins), the column as it is otherwise."""
    def with_options(**options):
        return [column.ref[0], column.ref[1], {**((column.ref[2] if len(column.ref) > 2 else None) or {}), **options}]

    if column.kind == "date":
        units = TIME_UNITS if column.time_only else (
            DATE_UNITS + TIME_UNITS if column.base_type != "type/Date" else DATE_UNITS)
        return [(f"{column.label}: {UNIT_LABELS.get(u, u.capitalize())}", with_options(**{"temporal-unit": u}))
                for u in units]
    plain = [(column.label, column.ref)]
    if column.kind != "number" or not binning or column.semantic_type in ("type/PK", "type/FK") \
            or column.ref[0] != "field":  # a custom column is grouped as it is, as Metabase offers it
        return plain
    if column.semantic_type in COORDINATES:
        return plain + [(f"{column.label}: Auto binned", with_options(binning={"strategy": "default"}))] + [
            (f"{column.label}: bins of {w}°", with_options(binning={"strategy": "bin-width", "bin-width": w}))
            for w in (0.1, 1, 10, 20)]
    return plain + [(f"{column.label}: Auto binned", with_options(binning={"strategy": "default"}))] + [
        (f"{column.label}: {n} bins", with_options(binning={"strategy": "num-bins", "num-bins": n}))
        for n in (10, 50, 100)]


# -- aggregations ------------------------------------------------------------------------------------

# (operator, label, what column it takes: None, "number" or "any"), as Metabase's notebook lists them.
AGGREGATIONS = (("count", "Count of rows", None), ("sum", "Sum of …", "number"), ("avg", "Average of …", "number"),
                ("distinct", "Number of distinct values of …", "any"), ("cum-sum", "Cumulative sum of …", "number"),
                ("cum-count", "Cumulative count of rows", None), ("min", "Minimum of …", "ordered"),
                ("max", "Maximum of …", "ordered"), ("stddev", "Standard deviation of …", "number"),
                ("median", "Median of …", "number"), ("percentile", "Percentile of …", "number"))
# The database feature an aggregation needs beyond the basic ones.
NEEDS = {"stddev": "standard-deviation-aggregations", "median": "percentile-aggregations",
         "percentile": "percentile-aggregations"}
AGG_NAMES = {op: label.replace(" of …", "").replace(" of rows", "") for op, label, _ in AGGREGATIONS}


def aggregations(features: tuple[str, ...]) -> list[tuple[str, str, str | None]]:
    if "basic-aggregations" not in features:
        return []
    return [a for a in AGGREGATIONS if a[0] not in NEEDS or NEEDS[a[0]] in features]


def fits(column: Column, takes: str) -> bool:
    if takes == "number":
        return column.kind == "number"
    if takes == "ordered":
        return column.kind in ("number", "date")
    return True


JOIN_TYPES = (("left-join", "Left outer join"), ("right-join", "Right outer join"), ("inner-join", "Inner join"),
              ("full-join", "Full outer join"))


def join_types(features: tuple[str, ...]) -> list[tuple[str, str]]:
    return [j for j in JOIN_TYPES if j[0] in features]


def find(columns: list[Column], text: str | None) -> Column | None:
    """The offered column whose ref a form sent (JSON), or None."""
    try:
        ref = orjson.loads(text or "")
    except orjson.JSONDecodeError:
        return None
    return next((c for c in columns if c.ref == ref), None)


def find_grouping(columns: list[Column], text: str | None) -> list | None:
    try:
        ref = orjson.loads(text or "")
    except orjson.JSONDecodeError:
        return None
    return next((r for c in columns for _, r in c.groupings if r == ref), None)
