"""The question builder page (issue 31, item 1): /question/notebook, where a person who does not write
SQL builds an MBQL query step by step — pick data, join, filter, summarize, sort, limit, a second
stage on top of a summary — and "Visualize" opens it as an ad-hoc question (/question#<base64>).

The query under construction is the URL's `q` (URL-safe base64 JSON of the dataset query, what the
ad-hoc page reads), so every step is a link or a GET form that htmx swaps in, and a reload or a sent link
shows the same query. A change is `?q=...&op=<change>&...`: the page applies it to the query
(notebook_query), checked against the columns the API described (notebook_columns), and answers the
page of the new query under its own URL (a 303 to it, or for htmx the page with HX-Push-Url). What the
forms offer is what the API says this user may read; what the builder writes is the MBQL a client
would post. Each step's "Preview" runs the query cut after it through POST /api/dataset.

Custom columns, custom aggregations and custom filters are written in the expression language with its
editor widget (notebook_expressions; plugins/app/expressions.py): a stage's custom columns are offered
as `["expression", name]` wherever the stage's columns are.
"""
from __future__ import annotations

from urllib.parse import urlencode

import orjson
from flask import Response, request
from werkzeug.datastructures import MultiDict

from core.http.internal import call

from . import filters, results
from .notebook_columns import (
    AGG_NAMES,
    Column,
    Source,
    Unreadable,
    aggregations,
    describe,
    find,
    find_grouping,
    fits,
    join_types,
    metadata,
)
from .notebook_expressions import (
    aggregation_name,
    custom_aggregation,
    custom_column,
    custom_filter,
    editors,
    removed_column,
    sayer,
)
from .notebook_filters import NO_VALUE, OPERATORS, BadFilter, clause, words
from .notebook_query import (
    PREVIEW_ROWS,
    STEPS,
    BadQuery,
    added,
    cleaned,
    cut,
    decode,
    encode,
    expressions_of,
    filters_of,
    is_card_source,
    new,
    ref_key,
    removed,
    stage_added,
    stages,
    summarized,
    with_limit,
)
from .render import go, read, signed_in_user
from .render import page as draw_page
from .views import blueprint, fragment

BASE = "/question/notebook"
SEARCHED = 50  # tables and saved questions a picker search lists
# Where a refused change's reason is shown: the step whose form asked it.
ERROR_STEPS = {"join": "join", "filter": "filter", "aggregate": "summarize", "group": "summarize", "sort": "sort",
               "limit": "limit", "remove": "top", "stage": "top", "expression": "expression",
               "remove-expression": "expression", "custom-aggregate": "summarize", "custom-filter": "filter"}


def url_of(query: dict | None = None, **extra) -> str:
    pairs = ([("q", encode(query))] if query is not None else []) + [
        (k, str(v)) for k, v in extra.items() if v not in (None, "")]
    return BASE + ("?" + urlencode(pairs) if pairs else "")


def adhoc_link(query: dict, display: str = "table") -> str:
    question = {"dataset_query": cleaned(query), "display": display, "visualization_settings": {}}
    return "/question#" + encode(question)


@blueprint.app_template_global("notebook_link")
def notebook_link(card: dict | None, kind: str | None) -> str | None:
    """"Open in editor" from a question page: a saved question's own query, a model as the source of a
    new one (as Metabase opens them), an ad-hoc question's query; none for SQL or for a user the card
    says may not run its query ad hoc."""
    if kind == "adhoc":
        try:
            return url_of(decode(request.args.get("q", "")))
        except BadQuery:
            return None
    if not isinstance(card, dict) or not card.get("can_run_adhoc_query"):
        return None
    query = card.get("dataset_query") or {}
    if kind == "model" and isinstance(query.get("database"), int) and isinstance(card.get("id"), int):
        return url_of(new(query["database"], f"card__{card['id']}"))
    try:
        return url_of(decode(encode(query)))
    except BadQuery:  # SQL, or a query in a form the builder does not edit
        return None


@blueprint.get(BASE)
def notebook():
    user = signed_in_user()
    args = request.args
    if not args.get("q"):
        return picker(user, args)
    try:
        query = decode(args["q"])
        source = describe(query)
    except BadQuery as exc:
        return failed_page(user, str(exc), 400)
    except Unreadable as exc:
        return failed_page(user, exc.message, exc.status)
    if args.get("op"):
        try:  # the changed query is described before it is shown: a change it cannot take is refused here
            changed_query = apply(query, source, args)
            changed_source = describe(changed_query)
        except (BadQuery, BadFilter) as exc:
            return notebook_page(user, query, source, args, error=str(exc))
        except Unreadable as exc:
            return notebook_page(user, query, source, args, error=exc.message, status=exc.status)
        target = url_of(changed_query)
        if not request.headers.get("HX-Request"):
            return go(target)
        response = notebook_page(user, changed_query, changed_source, MultiDict())
        response.headers["HX-Push-Url"] = target
        return response
    return notebook_page(user, query, source, args)


# -- the data picker ---------------------------------------------------------------------------------

def picker(user, args: MultiDict) -> Response:
    """Pick the data: a database then one of its tables, or a saved question or model; `find` narrows
    both lists (GET /api/table, GET /api/search, as the user may read them)."""
    text = (args.get("find") or "").strip()
    databases = [d for d in (read("/api/database").get("data") or []) if isinstance(d, dict)]
    chosen = next((d for d in databases if str(d.get("id")) == args.get("db")), None)
    tables = []
    if chosen is not None:
        tables = [t for t in read("/api/table") if t.get("db_id") == chosen["id"]
                  and t.get("visibility_type") in (None, "") and matches(t, text)]
        tables = [{"name": t.get("display_name") or t.get("name"), "schema": t.get("schema"),
                   "href": url_of(new(chosen["id"], t["id"]))} for t in tables]
    elif text:
        found = call("GET", "/api/search", query={"q": text, "models": "table"})
        tables = [{"name": t.get("display_name") or t.get("name"), "schema": t.get("database_name"),
                   "href": url_of(new(t["database_id"], t["id"]))}
                  for t in (found.body.get("data") or [] if found.ok else [])
                  if isinstance(t.get("database_id"), int) and isinstance(t.get("id"), int)][:SEARCHED]
    searched = call("GET", "/api/search", query={"models": ["card", "dataset"], **({"q": text} if text else {})})
    cards = [{"name": c.get("name"), "kind": "Model" if c.get("model") == "dataset" else "Question",
              "href": url_of(new(c["database_id"], f"card__{c['id']}"))}
             for c in (searched.body.get("data") or [] if searched.ok else [])
             if isinstance(c.get("database_id"), int) and isinstance(c.get("id"), int)][:SEARCHED]
    return draw_page("app/notebook.html", name="notebook", title="New question", user=user, picking=True,
                     databases=databases, chosen=chosen, tables=tables, cards=cards, find=text)


def matches(table: dict, text: str) -> bool:
    text = text.lower()
    return not text or text in str(table.get("display_name") or "").lower() or text in str(table.get("name")).lower()


# -- changes -----------------------------------------------------------------------------------------

def stage_index(args: MultiDict, source: Source) -> int:
    text = args.get("stage") or "0"
    if not text.isdigit() or int(text) >= len(source.columns):
        raise BadQuery("There is no such stage in this query.")
    return int(text)


def apply(query: dict, source: Source, args: MultiDict) -> dict:
    """The query with the change the form asks (`op`), or BadQuery/BadFilter saying why not."""
    op = args.get("op")
    if op == "stage":
        return stage_added(query)
    if op == "join":
        return join(query, source, args)
    index = stage_index(args, source)
    columns = source.columns[index]
    if op == "remove":
        position = args.get("index") or ""
        if not position.isdigit():
            raise BadQuery("Say which clause to remove.")
        return removed(query, index, args.get("key") or "", int(position))
    if op == "expression":
        return custom_column(query, index, args)
    if op == "remove-expression":
        return removed_column(query, index, args)
    if op == "custom-aggregate":
        return custom_aggregation(query, index, args)
    if op == "custom-filter":
        return custom_filter(query, index, args)
    if op == "filter":
        column = find(columns, args.get("column"))
        if column is None:
            raise BadQuery("Choose a column to filter on.")
        return added(query, index, "filter", clause(column, args.get("operator") or "", args.getlist("value")))
    if op == "aggregate":
        return added(query, index, "aggregation", aggregation(source, columns, args))
    if op == "group":
        ref = find_grouping(columns, args.get("column"))
        if ref is None:
            raise BadQuery("Choose a column to group by.")
        return added(query, index, "breakout", ref)
    if op == "sort":
        options = sort_options(stages(query)[index], columns)
        value = args.get("column")
        ref = next((r for _, r in options if orjson.dumps(r).decode() == value), None)
        if ref is None:
            raise BadQuery("Choose a column to sort by.")
        return added(query, index, "order-by", ["desc" if args.get("direction") == "desc" else "asc", ref])
    if op == "limit":
        text = (args.get("limit") or "").strip()
        if text and (not text.isdigit() or not 0 < int(text) <= 1_000_000):
            raise BadQuery("The row limit is a whole number from 1 to 1,000,000.")
        return with_limit(query, index, int(text) if text else None)
    raise BadQuery("The builder does not know that change.")


def aggregation(source: Source, columns: list[Column], args: MultiDict) -> list:
    offered = {op: takes for op, _, takes in aggregations(source.features)}
    op = args.get("operator") or ""
    if op not in offered:
        raise BadQuery("Choose how to summarize, among what this database can compute.")
    if offered[op] is None:
        return [op]
    column = find(columns, args.get("column"))
    if column is None or not fits(column, offered[op]):
        raise BadQuery(f"Choose a {'number ' if offered[op] == 'number' else ''}column for {AGG_NAMES[op].lower()}.")
    if op == "percentile":
        try:
            share = float(args.get("percentile") or "")
        except ValueError:
            share = -1.0
        if not 0 <= share <= 1:
            raise BadQuery("A percentile is a number from 0 to 1 (0.9 for the 90th).")
        return [op, column.ref, share]
    return [op, column.ref]


def sort_options(stage: dict, columns: list[Column]) -> list[tuple[str, list]]:
    """What a stage's rows can be sorted by: its breakouts and aggregations once it summarizes, else its
    columns."""
    if not summarized(stage):
        return [(c.label, c.ref) for c in columns]
    label = labeller(columns, stage)
    return [(label(r), r) for r in stage.get("breakout") or []] + [
        (label(["aggregation", i]), ["aggregation", i]) for i, _ in enumerate(stage.get("aggregation") or [])]


def join(query: dict, source: Source, args: MultiDict) -> dict:
    """A join of another table of the database on one pair of columns."""
    first = stages(query)[0]
    strategy = args.get("strategy") or ""
    if strategy not in dict(join_types(source.features)):
        raise BadQuery("Choose a join type this database can run.")
    table = joinable(source, args.get("table"))
    left = find(source.columns[0], args.get("left"))
    right = next((f for f in table.get("fields") or [] if str(f.get("id")) == args.get("right")), None)
    if left is None or right is None:
        raise BadQuery("Choose the column of each side the rows are matched on.")
    alias = alias_for(str(table.get("display_name") or table.get("name")), first.get("joins") or [])
    return added(query, 0, "joins", {"source-table": table["id"], "alias": alias, "strategy": strategy,
                                     "condition": ["=", left.ref, ["field", right["id"], {"join-alias": alias}]],
                                     "fields": "all"})


def joinable(source: Source, text: str | None) -> dict:
    """A table of the query's database the user may read (its query_metadata)."""
    if not text or not text.isdigit():
        raise BadQuery("Choose a table to join.")
    table = metadata(int(text))
    if table.get("db_id") != source.database:
        raise BadQuery("A join reads a table of the same database.")
    return table


def alias_for(name: str, joins: list) -> str:
    taken = {j.get("alias") for j in joins if isinstance(j, dict)}
    alias, n = name, 2
    while alias in taken:
        alias, n = f"{name} {n}", n + 1
    return alias


# -- the page ----------------------------------------------------------------------------------------

def labeller(columns: list[Column], stage: dict, grouped: bool = True):
    """Names for a stage's refs: a column by its label (with its grouping unless `grouped` is false: a
    filter's date says its own unit), an aggregation in words."""
    by_key = {ref_key(c.ref): c for c in columns}
    groupings = {orjson.dumps(r).decode(): label for c in columns for label, r in c.groupings}
    aggs = stage.get("aggregation") or []

    def label(ref) -> str:
        if isinstance(ref, list) and ref[:1] == ["aggregation"] and len(ref) > 1 and isinstance(ref[1], int):
            return agg_words(aggs[ref[1]], label) if ref[1] < len(aggs) else f"aggregation {ref[1] + 1}"
        text = orjson.dumps(ref).decode()
        if grouped and text in groupings:
            return groupings[text]
        column = by_key.get(ref_key(ref))
        return column.label if column else (str(ref[1]) if isinstance(ref, list) and len(ref) > 1 else text)
    return label


def agg_words(agg, label) -> str:
    if aggregation_name(agg):
        return aggregation_name(agg)
    if not isinstance(agg, list) or not agg:
        return str(agg)
    name = AGG_NAMES.get(agg[0], str(agg[0]))
    if len(agg) > 1:
        extra = f" ({agg[2]})" if agg[0] == "percentile" and len(agg) > 2 else ""
        return f"{name} of {label(agg[1])}{extra}"
    return name


def display_of(query: dict) -> str:
    """The display Visualize opens with, as Metabase picks one for the result's shape."""
    last = stages(query)[-1]
    aggs, breakouts = last.get("aggregation") or [], last.get("breakout") or []
    if aggs and not breakouts:
        return "scalar" if len(aggs) == 1 else "table"
    if aggs and any(isinstance(b, list) and len(b) == 3 and isinstance(b[2], dict) and b[2].get("temporal-unit")
                    for b in breakouts):
        return "line"
    return "bar" if aggs and len(breakouts) <= 2 else "table"


def notebook_page(user, query: dict, source: Source, args: MultiDict, error: str | None = None,
                  status: int = 400) -> Response:
    parts = stages(query)
    shown = []
    for index, stage in enumerate(parts):
        columns = source.columns[index]
        label, plain = labeller(columns, stage), labeller(columns, stage, grouped=False)
        say = sayer(query, index, lambda c, plain=plain: words(c, plain))

        def remove(key: str, position: int, index: int = index) -> str:
            return url_of(query, op="remove", stage=index, key=key, index=position)

        def edit(what: str, value, index: int = index) -> str:
            return url_of(query, stage=index, **{f"edit_{what}": value})
        steps = {
            "join": [(f"{j.get('alias')}: {dict(join_types(source.features)).get(j.get('strategy'), j.get('strategy'))}"
                      f" on {words(j.get('condition'), plain).replace(' is ', ' = ', 1)}",
                      remove("joins", i)) for i, j in enumerate(stage.get("joins") or []) if isinstance(j, dict)],
            "expression": [(name, edit("column", name), url_of(query, op="remove-expression", stage=index, name=name))
                           for name in expressions_of(stage)],
            "filter": [(say(c), edit("filter", i), remove("filter", i)) for i, c in enumerate(filters_of(stage))],
            "aggregation": [(agg_words(a, label), edit("aggregation", i), remove("aggregation", i))
                            for i, a in enumerate(stage.get("aggregation") or [])],
            "breakout": [(label(b), remove("breakout", i)) for i, b in enumerate(stage.get("breakout") or [])],
            "sort": [(f"{label(o[1])}, {'descending' if o[0] == 'desc' else 'ascending'}", remove("order-by", i))
                     for i, o in enumerate(stage.get("order-by") or []) if isinstance(o, list) and len(o) == 2],
        }
        shown.append({"index": index, "stage": stage, "columns": columns, "steps": steps,
                      "sorts": [(lbl, orjson.dumps(r).decode()) for lbl, r in sort_options(stage, columns)],
                      "filtering": filtering(columns, args, index),
                      "editors": editors(query, index, args, error is not None),
                      "preview": {step: preview_url(query, index, step) for step in STEPS}})
    title = source.name if not summarized(parts[-1]) else "New question"
    context = {"query": query, "encoded": encode(query), "here": url_of(query), "source": source, "stages": shown,
               "aggregations": aggregations(source.features), "join_types": join_types(source.features),
               "joining": joining(query, source, args), "operators": OPERATORS, "no_value": NO_VALUE,
               "visualize": adhoc_link(query, display_of(cleaned(query))), "can_stage": summarized(parts[-1]),
               "new_stage": url_of(query, op="stage"), "error": error, "error_at": args.get("op"),
               "error_stage": args.get("stage") or "0", "source_name": source_name(parts[0], source),
               "error_step": error_step(args, len(parts)), **filters.widget_context()}
    return draw_page("app/notebook.html", name="notebook", title=f"Editing: {title}", user=user,
                     status=status if error else 200, **context)


def source_name(first: dict, source: Source) -> str:
    kind = "Saved question" if is_card_source(first.get("source-table")) else "Table"
    return f"{kind}: {source.name}"


def error_step(args: MultiDict, count: int) -> str:
    """The step whose form asked a refused change ("top": above the stages)."""
    stage = args.get("stage") or "0"
    if not stage.isdigit() or int(stage) >= count:
        return "top"
    return ERROR_STEPS.get(args.get("op") or "", "top")


def preview_url(query: dict, index: int, step: str) -> str:
    return "/question/notebook/preview?" + urlencode({"q": encode(query), "stage": index, "step": step})


def filtering(columns: list[Column], args: MultiDict, index: int) -> dict | None:
    """The filter form's second part once a column is chosen (`filter_column`, on stage `stage`): the
    column's comparisons, its listed values (GET /api/field/:id/values) or its date widget."""
    if args.get("stage", "0") != str(index):
        return None
    # A refused filter keeps its form open on its column.
    column = find(columns, args.get("filter_column") or (args.get("column") if args.get("op") == "filter" else None))
    if column is None:
        return None
    out = {"column": column, "operators": OPERATORS[column.kind], "listed": [], "values_error": None}
    if column.kind == "category":
        answer = call("GET", f"/api/field/{column.field_id}/values")
        if answer.ok and isinstance(answer.body, dict):
            out["listed"] = [str(v[0]) for v in answer.body.get("values") or [] if isinstance(v, list) and v
                             and v[0] is not None][:200]
        else:
            out["values_error"] = "The column's values could not be listed; type one instead."
    if column.kind == "date":
        out["date"] = filters.Filter({"id": "value", "slug": "value", "name": column.label,
                                      "type": "date/all-options"}, (), None)
    return out


def joining(query: dict, source: Source, args: MultiDict) -> dict:
    """The join form: the tables of the database, and once one is chosen (`join_table`) its columns
    and the foreign key between it and the data already there, proposed as the condition."""
    tables = [t for t in read("/api/table") if t.get("db_id") == source.database and t.get("visibility_type") in (None, "")]
    out = {"tables": [(t["id"], t.get("display_name") or t.get("name")) for t in tables], "table": None}
    chosen = args.get("join_table") or (args.get("table") if args.get("op") == "join" else None) or ""
    if not chosen.isdigit() or int(chosen) not in {t["id"] for t in tables}:
        return out
    try:
        table = metadata(int(chosen))
    except Unreadable:
        return out
    fields = [f for f in table.get("fields") or [] if isinstance(f.get("id"), int)]
    ids = {f["id"] for f in fields}
    left, right = None, None
    own = [c for c in source.columns[0] if c.own]
    for column in own:  # the data's FK to the joined table
        if column.fk_target_field_id in ids:
            left, right = column.value, column.fk_target_field_id
            break
    if left is None:  # the joined table's FK to the data
        by_id = {c.field_id: c for c in own if c.field_id is not None}
        for f in fields:
            if f.get("fk_target_field_id") in by_id:
                left, right = by_id[f["fk_target_field_id"]].value, f["id"]
                break
    out.update(table={"id": table["id"], "name": table.get("display_name") or table.get("name"),
                      "fields": [(f["id"], f.get("display_name") or f.get("name")) for f in fields]},
               left=left, right=right, suggested=left is not None)
    return out


def failed_page(user, message: str, status: int) -> Response:
    return draw_page("app/notebook.html", name="notebook", title="This question cannot be edited", user=user,
                     status=status, bad=message)


# -- previews ----------------------------------------------------------------------------------------

@blueprint.get("/question/notebook/preview")
def preview():
    """A step's first rows (an htmx fragment): the query cut after the step, through POST /api/dataset."""
    signed_in_user()
    try:
        query = decode(request.args.get("q", ""))
        index = request.args.get("stage") or "0"
        if not index.isdigit():
            raise BadQuery("There is no such stage in this query.")
        ran = cut(query, int(index), request.args.get("step") or "")
    except BadQuery as exc:
        return fragment("app/_form_error.html", status=400, message=str(exc))
    answer = call("POST", "/api/dataset", json=ran)
    body = answer.body if isinstance(answer.body, dict) else {}
    if not answer.ok or body.get("error"):
        status = answer.status if 400 <= answer.status < 500 else 400
        message = ("You may not read this data." if status == 403
                   else str(body.get("error") or answer.message or "The preview could not run."))
        return fragment("app/_form_error.html", status=status, message=message)
    # A column's header opens the step's whole result as an ad-hoc question sorted by it.
    whole = encode(cut(query, int(index), request.args["step"], rows=None))

    def sorted_link(sort=None, dir=None, page=None) -> str:
        return "/question/adhoc?" + urlencode({"q": whole, "view": "table", "sort": sort or "",
                                               **({"dir": dir} if dir else {})})
    table = results.table_of(results.columns(body), results.rows(body), sort=None, descending=False, page=1,
                             size=PREVIEW_ROWS, url=sorted_link)
    return fragment("app/_notebook_preview.html", table=table, link=adhoc_link(decode(whole)))
