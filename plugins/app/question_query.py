"""The queries a question page asks the API besides the saved card's own: the ad-hoc question a link
carries (/question#<base64>, Metabase's format) decoded, and a query sorted by one of its result
columns.

Sorting wraps the query in one more stage that orders by the column's name, so the query's own
aggregations, limit and order stay as they were (a "top 10" question sorted by another column still
shows the same ten rows) and the database sorts every row, not only those of one page. The API reads
and checks the result: nothing here interprets MBQL beyond where its stages are.
"""
from __future__ import annotations

import base64
import binascii
import uuid

import orjson

BAD_LINK = ("This link does not hold a question Tessera can read: it should be base64-encoded JSON "
            "with a dataset_query, as Metabase's question links are.")


class BadLink(ValueError):
    """The ad-hoc question's text is not base64 JSON of a question."""


def decode_adhoc(text: str) -> dict:
    """The question a link's hash carries: {"dataset_query", "display", "visualization_settings",
    "name"?, "original_card_id"?}. Standard or URL-safe base64, padding optional; a bare dataset_query is taken too."""
    # A "+" of base64 put in a query string unescaped arrives as a space.
    text = (text or "").strip().replace(" ", "+")
    if not text:
        raise BadLink(BAD_LINK)
    try:
        raw = text.encode("ascii").replace(b"-", b"+").replace(b"_", b"/")
        value = orjson.loads(base64.b64decode(raw + b"=" * (-len(raw) % 4), validate=True))
    except (UnicodeEncodeError, binascii.Error, orjson.JSONDecodeError, ValueError):
        raise BadLink(BAD_LINK) from None
    if isinstance(value, dict) and "dataset_query" not in value and "database" in value:
        value = {"dataset_query": value}
    if not isinstance(value, dict) or not isinstance(value.get("dataset_query"), dict):
        raise BadLink(BAD_LINK)
    settings = value.get("visualization_settings")
    display = value.get("display")
    name = value.get("name")
    original = value.get("original_card_id")  # the saved question a drill or an edit started from
    return {"dataset_query": value["dataset_query"],
            "display": display if isinstance(display, str) and display else "table",
            "visualization_settings": settings if isinstance(settings, dict) else {},
            "name": name if isinstance(name, str) and name.strip() else None,
            "original_card_id": original if isinstance(original, int) and not isinstance(original, bool)
            and 0 < original < 10**15 else None}


def encode_query(dataset_query: dict) -> str:
    """A dataset_query as URL-safe base64, the form x-ray links of ad-hoc queries take."""
    return base64.urlsafe_b64encode(orjson.dumps(dataset_query)).decode("ascii").rstrip("=")


def is_mbql(dataset_query: dict) -> bool:
    stages = dataset_query.get("stages")
    if isinstance(stages, list):
        return not any(isinstance(stage, dict) and stage.get("lib/type") == "mbql.stage/native" for stage in stages)
    return dataset_query.get("type") == "query"


def sorted_by(dataset_query: dict, column: dict, descending: bool) -> dict:
    """The MBQL query with one more stage ordering its rows by `column` (a result column as the API
    gave it: name and base_type)."""
    direction = "desc" if descending else "asc"
    base_type = column.get("base_type") or "type/*"
    if isinstance(dataset_query.get("stages"), list):  # MBQL 5
        ref = ["field", {"lib/uuid": str(uuid.uuid4()), "base-type": base_type}, column["name"]]
        stage = {"lib/type": "mbql.stage/mbql", "order-by": [[direction, {"lib/uuid": str(uuid.uuid4())}, ref]]}
        return {**dataset_query, "stages": [*dataset_query["stages"], stage]}
    inner = dataset_query.get("query") if isinstance(dataset_query.get("query"), dict) else {}
    ref = ["field", column["name"], {"base-type": base_type}]
    return {**dataset_query, "query": {"source-query": inner, "order-by": [[direction, ref]]}}


def source_table(dataset_query: dict):
    """The legacy query's source table (an id or "card__N"), or None."""
    inner = dataset_query.get("query")
    return inner.get("source-table") if dataset_query.get("type") == "query" and isinstance(inner, dict) else None
