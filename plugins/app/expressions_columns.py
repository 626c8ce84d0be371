"""The columns a custom expression may name, for one query (plugins/app/expressions.py is the interface),
read through the API as the signed-in user, so the editor offers only what that user may read:

- the source table's fields (GET /api/table/:id/query_metadata) by display name, as ["field", id, null];
- through each of its foreign keys, the target table's fields as "Product → Category"
  (["field", id, {"source-field": fk id}]), the key's display name without its " ID", as Metabase does;
- each join's fields as "<alias> → <field>" (["field", id, {"join-alias": alias}]);
- the stage's custom columns (["expression", name]);
- a saved question's or model's columns (GET /api/table/card__N/query_metadata) and a nested query's
  result columns (POST /api/dataset of the inner query, one row) by name with their base type;
- the table's segments for a filter or a summary's conditions, and its metrics for a summary
  ([Segment name] -> ["segment", id], [Metric name] -> ["metric", id]).

Legacy MBQL (`type: query`), the form the app's question links carry.
"""
from __future__ import annotations

import re

from core.http.internal import call

ARROW = " → "


class Columns(dict):
    """Display name -> MBQL reference, with `types`: display name -> base type where the API gives one."""

    def __init__(self):
        super().__init__()
        self.types: dict[str, str] = {}

    def add(self, name: str, ref, base_type: str | None = None) -> None:
        if name not in self:
            self[name] = ref
            if base_type:
                self.types[name] = base_type


class ColumnsError(ValueError):
    """The query's columns cannot be read: what the person (or the API) should know, with a status."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message, self.status = message, status


def _metadata(table) -> dict:
    answer = call("GET", f"/api/table/{table}/query_metadata")
    if not answer.ok:
        raise ColumnsError(answer.message or "The query's table cannot be read.", answer.status)
    return answer.body


def _group(fk_name: str) -> str:
    return re.sub(r"(?i)[\s_-]*id$", "", fk_name).strip() or fk_name


def _by_name(columns: Columns, fields: list[dict]) -> None:
    for f in fields:
        if f.get("name"):
            base_type = f.get("base_type") or "type/*"
            columns.add(str(f.get("display_name") or f["name"]), ["field", f["name"], {"base-type": base_type}], base_type)


def columns_of(dataset_query: dict, kind: str = "expression", exclude: str | None = None) -> Columns:
    """Display name -> MBQL reference of every column the query's last stage offers (see the module)."""
    if not isinstance(dataset_query, dict) or dataset_query.get("type") != "query" \
            or not isinstance(dataset_query.get("query"), dict):
        raise ColumnsError("The expression editor reads an MBQL query (type \"query\") with a source table.")
    inner = dataset_query["query"]
    if not isinstance(inner.get("expressions") or {}, dict) or not isinstance(inner.get("joins") or [], list):
        raise ColumnsError("The query's expressions must be a map and its joins a list.")
    columns = Columns()
    source = inner.get("source-table")
    if isinstance(source, int) and not isinstance(source, bool):
        table = _metadata(source)
        fields = [f for f in table.get("fields") or [] if f.get("visibility_type") not in ("sensitive", "retired")]
        for f in fields:
            columns.add(str(f.get("display_name") or f["name"]), ["field", f["id"], None], _type(f))
        if kind in ("filter", "aggregation"):  # a segment is a condition: a filter, or CountIf([Segment])
            for segment in table.get("segments") or []:
                columns.add(str(segment.get("name")), ["segment", segment["id"]])
        if kind == "aggregation":
            for metric in table.get("metrics") or []:
                columns.add(str(metric.get("name")), ["metric", metric["id"]])
        _expressions(inner, columns, exclude)
        for f in fields:
            target = f.get("target") or {}
            if f.get("semantic_type") == "type/FK" and target.get("table_id"):
                answer = call("GET", f"/api/table/{target['table_id']}/query_metadata")
                if not answer.ok:  # a table this user may not read: its columns are not offered
                    continue
                group = _group(str(f.get("display_name") or f["name"]))
                for g in answer.body.get("fields") or []:
                    columns.add(f"{group}{ARROW}{g.get('display_name') or g['name']}",
                                ["field", g["id"], {"source-field": f["id"]}], _type(g))
    elif isinstance(source, str) and re.fullmatch(r"card__\d+", source):
        _by_name(columns, _metadata(source).get("fields") or [])
        _expressions(inner, columns, exclude)
    elif isinstance(inner.get("source-query"), dict):
        _by_name(columns, _result_columns(dataset_query))
        _expressions(inner, columns, exclude)
    else:
        raise ColumnsError("The query names no source table or saved question.")
    for join in inner.get("joins") or []:
        if not isinstance(join, dict):
            continue
        alias, table_id = join.get("alias"), join.get("source-table")
        if not isinstance(alias, str) or not isinstance(table_id, int) or isinstance(table_id, bool):
            continue
        answer = call("GET", f"/api/table/{table_id}/query_metadata")
        if answer.ok:
            for g in answer.body.get("fields") or []:
                columns.add(f"{alias}{ARROW}{g.get('display_name') or g['name']}",
                            ["field", g["id"], {"join-alias": alias}], _type(g))
    return columns


def _type(field: dict) -> str | None:
    return field.get("effective_type") or field.get("base_type")


def _expressions(inner: dict, columns: Columns, exclude: str | None) -> None:
    for name in inner.get("expressions") or {}:
        if name != exclude:
            columns[str(name)] = ["expression", name]
            columns.types.pop(str(name), None)  # a custom column shadows a field of its name


def _result_columns(dataset_query: dict) -> list[dict]:
    """The columns a nested query's inner stage answers (one row asked: only the columns are read)."""
    inner_stage = dict(dataset_query["query"]["source-query"])
    inner_stage["limit"] = 1
    answer = call("POST", "/api/dataset", json={**dataset_query, "query": inner_stage})
    if not answer.ok or not isinstance(answer.body, dict) or answer.body.get("status") == "failed":
        message = answer.body.get("error") if isinstance(answer.body, dict) else None
        raise ColumnsError(str(message or answer.message or "The query's inner stage cannot run."),
                           answer.status if not answer.ok else 400)
    return (answer.body.get("data") or {}).get("cols") or []
