"""What the dashboard editor knows of a saved question: its name, display, visualization settings (what a
card's overrides are measured against), and the columns a filter may be
wired to (Metabase's mappable columns), read through the API as the editing user: an MBQL question's
from its data's query metadata (the question builder's `notebook_columns`, FK-reached fields included),
a native one's from its template tags. A column is offered as (label, target, kind), the target being
the parameter mapping's `target`; a filter type takes the columns of matching kinds.
"""
from __future__ import annotations

import orjson

from core.http.internal import call

from . import notebook_columns
from .notebook_query import BadQuery

# Which columns each kind of filter (its sectionId, else the type's head) may be wired to.
TAKES = {"date": ("date",), "number": ("number",), "string": ("category", "text"), "location": ("category", "text"),
         "id": ("id",), "category": ("category", "text")}
LOCATION_TYPES = ("type/City", "type/State", "type/Country", "type/ZipCode")
TAG_KINDS = {"date": "date", "number": "number", "text": "text"}


def card_info(card_id: int) -> dict | None:
    """The editor's description of a saved question the user may read (None if they may not)."""
    answer = call("GET", f"/api/card/{card_id}")
    if not answer.ok or not isinstance(answer.body, dict):
        return None
    card = answer.body
    settings = card.get("visualization_settings")
    return {"name": card.get("name") or f"Question {card_id}", "display": card.get("display") or "table",
            "columns": columns(card.get("dataset_query") or {}),
            "settings": settings if isinstance(settings, dict) else {}}


def columns(dataset_query: dict) -> list[list]:
    """[label, target, kind] of each column a filter may be wired to."""
    if dataset_query.get("type") == "native":
        tags = ((dataset_query.get("native") or {}).get("template-tags") or {})
        out = []
        for name, tag in tags.items():
            if not isinstance(tag, dict):
                continue
            if tag.get("type") == "dimension":
                out.append([tag.get("display-name") or name, ["dimension", ["template-tag", name]], "any"])
            elif tag.get("type") in TAG_KINDS:
                out.append([tag.get("display-name") or name, ["variable", ["template-tag", name]], TAG_KINDS[tag["type"]]])
        return out
    if dataset_query.get("type") != "query":
        return []
    try:
        source = notebook_columns.describe(dataset_query)
    except (BadQuery, notebook_columns.Unreadable, KeyError, TypeError):
        return []
    out = []
    for column in source.columns[0]:
        kind = column.kind
        if column.semantic_type in ("type/PK", "type/FK"):
            kind = "id"
        elif column.semantic_type in LOCATION_TYPES:
            kind = "category"
        if kind == "boolean":
            continue
        out.append([column.label, ["dimension", column.ref], kind, column.field_id])
    return out


def fitting(parameter: dict, offered: list[list]) -> list[list]:
    """The columns a filter of this type may be wired to (a text filter also takes keys, as Metabase's)."""
    kind = str(parameter.get("sectionId") or str(parameter.get("type") or "").split("/")[0])
    takes = TAKES.get(kind, ()) + (("id",) if kind == "string" else ())
    return [column for column in offered if column[2] == "any" or column[2] in takes]


def key(target) -> str:
    return orjson.dumps(target).decode()


def field_id_of(target) -> int | None:
    """The field a ["dimension", ["field", id, opts]] target reads (for wiring the same field elsewhere)."""
    if (isinstance(target, list) and len(target) == 2 and isinstance(target[1], list) and len(target[1]) >= 2
            and target[1][0] == "field" and type(target[1][1]) is int):
        opts = target[1][2] if len(target[1]) > 2 and isinstance(target[1][2], dict) else {}
        return None if opts.get("join-alias") else target[1][1]
    return None
