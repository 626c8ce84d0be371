"""The question builder's query (issue 31, item 1): the legacy MBQL dataset query the notebook page
edits, as POST /api/dataset and POST /api/card take it, read as stages and steps and changed one
clause at a time.

A query is `{"database", "type": "query", "query": inner}`; a stage on top of another is the inner
query's `source-query`, as a client nests it. Within a stage the steps come in Metabase's notebook
order (data, joins, custom columns, filters, summarize, sort, limit); a step's preview is the query cut after it.
Several filters are one `["and", ...]` clause, as Metabase's notebook writes them. Nothing here calls
the API: what a clause may hold is checked by the caller against the columns the API described.
"""
from __future__ import annotations

import base64
import binascii

import orjson

STEPS = ("data", "join", "expression", "filter", "summarize", "sort", "limit")
# The inner query's keys each step owns.
STEP_KEYS = {"data": ("source-table",), "join": ("joins",), "expression": ("expressions",), "filter": ("filter",),
             "summarize": ("aggregation", "breakout"), "sort": ("order-by",), "limit": ("limit",)}
# The keys of a stage a clause can be removed from, by index (a limit is one value).
LISTS = ("joins", "filter", "aggregation", "breakout", "order-by")
PREVIEW_ROWS = 10
BAD_QUERY = ("This link does not hold a query the question builder can edit: it should be base64 JSON of an "
             "MBQL dataset query ({\"database\", \"type\": \"query\", \"query\": {\"source-table\" ...}}).")


class BadQuery(ValueError):
    """The URL's query is not one the builder can read, or a change asked of it does not fit it."""


def encode(dataset_query: dict) -> str:
    """URL-safe base64 of the query's JSON, without padding (the ad-hoc page reads the same)."""
    return base64.urlsafe_b64encode(orjson.dumps(dataset_query)).decode("ascii").rstrip("=")


def decode(text: str) -> dict:
    """The dataset query a URL's `q` holds, checked for the shape the builder edits."""
    text = (text or "").strip().replace(" ", "+")
    try:
        raw = text.encode("ascii").replace(b"-", b"+").replace(b"_", b"/")
        value = orjson.loads(base64.b64decode(raw + b"=" * (-len(raw) % 4), validate=True))
    except (UnicodeEncodeError, binascii.Error, orjson.JSONDecodeError, ValueError):
        raise BadQuery(BAD_QUERY) from None
    if isinstance(value, dict) and isinstance(value.get("dataset_query"), dict):
        value = value["dataset_query"]  # an ad-hoc question's whole link
    if not isinstance(value, dict) or value.get("type") != "query" or not isinstance(value.get("query"), dict):
        raise BadQuery(BAD_QUERY)
    database = value.get("database")
    if not isinstance(database, int) or isinstance(database, bool):
        raise BadQuery(BAD_QUERY)
    found = stages(value)
    source = found[0].get("source-table")
    if not (isinstance(source, int) and not isinstance(source, bool)) and not is_card_source(source):
        raise BadQuery("The builder starts from a table or a saved question; this query has neither.")
    return {"database": database, "type": "query", "query": value["query"]}


def is_card_source(source) -> bool:
    return isinstance(source, str) and source.startswith("card__") and source[6:].isdigit()


def stages(dataset_query: dict) -> list[dict]:
    """The query's stages, innermost (the one reading the data) first, each without its source-query."""
    out, inner = [], dataset_query["query"]
    while isinstance(inner, dict):
        out.append({k: v for k, v in inner.items() if k != "source-query"})
        inner = inner.get("source-query")
    if len(out) > 20:
        raise BadQuery("This query nests more stages than the builder shows.")
    return list(reversed(out))


def rebuilt(dataset_query: dict, parts: list[dict]) -> dict:
    """The dataset query with these stages (innermost first), nested back."""
    inner = None
    for stage in parts:
        inner = dict(stage) if inner is None else {"source-query": inner, **stage}
    return {**dataset_query, "query": inner}


def cleaned(dataset_query: dict) -> dict:
    """The query without empty stages on top (a stage just added and not used yet), as Metabase drops
    them before a query runs or is saved."""
    parts = stages(dataset_query)
    while len(parts) > 1 and not parts[-1]:
        parts.pop()
    return rebuilt(dataset_query, parts)


def new(database: int, source) -> dict:
    return {"database": database, "type": "query", "query": {"source-table": source}}


def filters_of(stage: dict) -> list:
    clause = stage.get("filter")
    if not isinstance(clause, list) or not clause:
        return []
    return list(clause[1:]) if clause[0] == "and" else [clause]


def with_filters(stage: dict, clauses: list) -> dict:
    out = {k: v for k, v in stage.items() if k != "filter"}
    if len(clauses) == 1:
        out["filter"] = clauses[0]
    elif clauses:
        out["filter"] = ["and", *clauses]
    return out


def listed(stage: dict, key: str) -> list:
    if key == "filter":
        return filters_of(stage)
    value = stage.get(key)
    return list(value) if isinstance(value, list) else []


def with_list(stage: dict, key: str, values: list) -> dict:
    if key == "filter":
        return with_filters(stage, values)
    out = {k: v for k, v in stage.items() if k != key}
    if values:
        out[key] = values
    return out


def changed(dataset_query: dict, index: int, change) -> dict:
    """The query with stage `index` replaced by change(stage)."""
    parts = stages(dataset_query)
    if not 0 <= index < len(parts):
        raise BadQuery("There is no such stage in this query.")
    parts[index] = change(parts[index])
    return rebuilt(dataset_query, parts)


def added(dataset_query: dict, index: int, key: str, clause) -> dict:
    return changed(dataset_query, index, lambda stage: with_list(stage, key, [*listed(stage, key), clause]))


def removed(dataset_query: dict, index: int, key: str, position: int) -> dict:
    """The query without one clause; removing a summary clause (aggregation or grouping) of a stage that
    another stage reads removes the stages on top of it too: their columns were the summary's."""
    if key == "limit":
        return changed(dataset_query, index, lambda stage: {k: v for k, v in stage.items() if k != "limit"})
    if key not in LISTS:
        raise BadQuery("The builder cannot remove that.")

    def drop(stage):
        values = listed(stage, key)
        if not 0 <= position < len(values):
            raise BadQuery("There is no such clause in this step.")
        gone = values.pop(position)
        out = with_list(stage, key, values)
        if key == "breakout":  # a sort by the grouping goes with it
            out = with_list(out, "order-by", [o for o in listed(out, "order-by") if o[1:] != [gone]])
        if key == "aggregation":  # a sort by a later aggregation moves down one; one by this one goes
            out = with_list(out, "order-by", [renumbered(o, position) for o in listed(out, "order-by")
                                              if not is_aggregation_ref(o[1], position)])
        return out

    before = stages(dataset_query)[index]
    query = changed(dataset_query, index, drop)
    if key == "joins":
        gone = listed(before, "joins")[position]
        alias = gone.get("alias") if isinstance(gone, dict) else None
        query = changed(query, index, lambda stage: without_alias(stage, alias))
        if isinstance(alias, str):  # a custom column on the join's columns goes, with what reads it
            mark = orjson.dumps({"join-alias": alias}).decode()[1:-1]
            for name, clause in expressions_of(stages(query)[index]).items():
                if mark in orjson.dumps(clause).decode() and name in expressions_of(stages(query)[index]):
                    query = expression_removed(query, index, name)
    if key in ("aggregation", "breakout") or summary_of(stages(query)[index]) != summary_of(before):
        query = rebuilt(query, stages(query)[:index + 1])
    return query


def expressions_of(stage: dict) -> dict:
    value = stage.get("expressions")
    return dict(value) if isinstance(value, dict) else {}


def reads_expression(clause, name: str) -> bool:
    """Whether a clause reads the custom column `name` (["expression", name] with or without options)."""
    mark, text = orjson.dumps(["expression", name]).decode()[:-1], orjson.dumps(clause).decode()
    return mark + "]" in text or mark + "," in text


def with_expression(dataset_query: dict, index: int, name: str, clause, original: str | None = None) -> dict:
    """The query with the custom column `name` of stage `index` set to `clause`; given the `original` name
    of one it replaces, a rename: the stage's clauses that read it read the new name, and so does the
    stage on top where it was a grouping (its result column is named after it)."""
    def put(stage):
        given = expressions_of(stage)
        out = {}
        for key, value in given.items():  # a renamed column keeps its place among the others
            if key == original:
                out[name] = clause
            elif key != name:
                out[key] = value
        if original not in given:
            out[name] = clause
        stage = {**stage, "expressions": out}
        if original and original != name:
            stage = renamed_refs(stage, ["expression", original], ["expression", name])
        return stage

    before = stages(dataset_query)[index]
    query = changed(dataset_query, index, put)
    grouped = any(reads_expression(b, original) for b in listed(before, "breakout")) if original else False
    if original and original != name and grouped and index + 1 < len(stages(query)):
        query = changed(query, index + 1, lambda stage: renamed_result(stage, original, name))
    return query


def renamed_refs(stage: dict, old: list, new: list) -> dict:
    def walk(x):
        if isinstance(x, list):
            if x[:2] == old:
                return [*new, *x[2:]]
            return [walk(v) for v in x]
        if isinstance(x, dict):
            return {k: walk(v) for k, v in x.items()}
        return x
    return walk(stage)


def renamed_result(stage: dict, old: str, new: str) -> dict:
    def walk(x):
        if isinstance(x, list):
            if len(x) == 3 and x[0] == "field" and x[1] == old and (x[2] is None or isinstance(x[2], dict)):
                return ["field", new, x[2]]
            return [walk(v) for v in x]
        if isinstance(x, dict):
            return {k: walk(v) for k, v in x.items()}
        return x
    return walk(stage)


def expression_removed(dataset_query: dict, index: int, name: str) -> dict:
    """The query without the custom column `name` of stage `index` and the clauses that read it (other
    custom columns, filters, summaries, groupings, sorts), as a removed join takes its columns' clauses;
    a changed summary takes the stages on top with it."""
    before = stages(dataset_query)[index]
    if name not in expressions_of(before):
        raise BadQuery("There is no such custom column in this stage.")

    def drop(stage):
        gone, left = {name}, expressions_of(stage)
        left.pop(name)
        while True:  # a custom column built on a removed one goes too
            more = {k for k, v in left.items() if any(reads_expression(v, g) for g in gone)}
            if not more:
                break
            gone |= more
            left = {k: v for k, v in left.items() if k not in more}
        out = {k: v for k, v in stage.items() if k != "expressions"}
        if left:
            out["expressions"] = left
        aggregations = listed(out, "aggregation")
        dropped = [i for i, a in enumerate(aggregations) if any(reads_expression(a, g) for g in gone)]
        for key in ("filter", "aggregation", "breakout", "order-by"):
            out = with_list(out, key, [c for c in listed(out, key) if not any(reads_expression(c, g) for g in gone)])
        for position in reversed(dropped):  # sorts by a later aggregation move down
            out = with_list(out, "order-by", [renumbered(o, position) for o in listed(out, "order-by")
                                              if not is_aggregation_ref(o[1], position)])
        return out

    query = changed(dataset_query, index, drop)
    if summary_of(stages(query)[index]) != summary_of(before):
        query = rebuilt(query, stages(query)[:index + 1])
    return query


def replaced(dataset_query: dict, index: int, key: str, position: int, clause) -> dict:
    """The query with one filter or aggregation of a stage replaced (an edited custom one)."""
    def put(stage):
        values = listed(stage, key)
        if not 0 <= position < len(values):
            raise BadQuery("There is no such clause in this step.")
        values[position] = clause
        return with_list(stage, key, values)
    return changed(dataset_query, index, put)


def stage_query(dataset_query: dict, index: int) -> dict:
    """The query as far as stage `index` (all of it): what an expression of that stage is written against."""
    return rebuilt(dataset_query, stages(dataset_query)[:index + 1])


def summary_of(stage: dict):
    return stage.get("aggregation"), stage.get("breakout")


def without_alias(stage: dict, alias) -> dict:
    """A stage without the clauses that read a removed join's columns (a filter, summary or sort on them)."""
    if not isinstance(alias, str):
        return stage
    mark = orjson.dumps({"join-alias": alias}).decode()[1:-1]
    out = stage
    for key in ("filter", "aggregation", "breakout", "order-by"):
        out = with_list(out, key, [c for c in listed(out, key) if mark not in orjson.dumps(c).decode()])
    return out


def is_aggregation_ref(ref, position: int) -> bool:
    return isinstance(ref, list) and len(ref) >= 2 and ref[0] == "aggregation" and ref[1] == position


def renumbered(order: list, removed_position: int) -> list:
    ref = order[1]
    if isinstance(ref, list) and ref[:1] == ["aggregation"] and isinstance(ref[1], int) and ref[1] > removed_position:
        return [order[0], ["aggregation", ref[1] - 1, *ref[2:]]]
    return order


def summarized(stage: dict) -> bool:
    return bool(stage.get("aggregation") or stage.get("breakout"))


def with_limit(dataset_query: dict, index: int, limit: int | None) -> dict:
    def set_limit(stage):
        out = {k: v for k, v in stage.items() if k != "limit"}
        if limit is not None:
            out["limit"] = limit
        return out
    return changed(dataset_query, index, set_limit)


def stage_added(dataset_query: dict) -> dict:
    parts = stages(dataset_query)
    if not summarized(parts[-1]):
        raise BadQuery("A new stage goes on top of a summary: summarize this stage first.")
    return rebuilt(dataset_query, [*parts, {}])


def cut(dataset_query: dict, index: int, step: str, rows: int | None = PREVIEW_ROWS) -> dict:
    """The query as far as one step of one stage (what that step's preview runs), at most `rows` rows
    (None: its own limit)."""
    parts = stages(dataset_query)
    if not 0 <= index < len(parts) or step not in STEPS:
        raise BadQuery("There is no such step in this query.")
    kept = {key for name in STEPS[:STEPS.index(step) + 1] for key in STEP_KEYS[name]}
    last = {k: v for k, v in parts[index].items() if k in kept or k not in sum(STEP_KEYS.values(), ())}
    limit = last.get("limit")
    if rows is not None:
        last["limit"] = min(limit, rows) if isinstance(limit, int) and not isinstance(limit, bool) else rows
    return rebuilt(dataset_query, [*parts[:index], last])


def ref_key(ref) -> str:
    """A column's identity whatever its bucketing: the ref without temporal-unit, binning or base-type."""
    if isinstance(ref, list) and len(ref) == 3 and ref[0] == "field":
        options = {k: v for k, v in (ref[2] or {}).items() if k in ("join-alias", "source-field")}
        return orjson.dumps(["field", ref[1], options or None]).decode()
    return orjson.dumps(ref).decode()
