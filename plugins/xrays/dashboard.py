"""A transient dashboard in Metabase's shape from a root and its built cards: groups as text headers,
cards packed on the 24-column grid, dashboard filters with their mappings, and the related links."""
from __future__ import annotations

import hashlib

from . import types
from .bind import Built, interpolate, label
from .roots import Col, Root
from .templates import Template

GRID_WIDTH = 24
MAX_FILTERS = 4


def query_of(root: Root, built: Built, filters: tuple | None = None) -> dict:
    """The card's MBQL on `root`'s source, narrowed by the root's filters (or `filters`) and its own."""
    inner: dict = dict(root.source)
    if built.aggregation:
        inner["aggregation"] = built.aggregation
    if built.breakout:
        inner["breakout"] = built.breakout
    clauses = [*(root.filters if filters is None else filters), *built.filters]
    if clauses:
        inner["filter"] = clauses[0] if len(clauses) == 1 else ["and", *clauses]
    if built.order_by:
        inner["order-by"] = built.order_by
    if built.spec.limit:
        inner["limit"] = built.spec.limit
    return {"database": root.database_id, "type": "query", "query": inner}


def card_json(root: Root, built: Built, user_id: int, title: str | None = None, filters: tuple | None = None) -> dict:
    return {"id": None, "name": (title or built.title)[:254], "display": built.spec.display,
            "description": None, "dataset_query": query_of(root, built, filters),
            "visualization_settings": dict(built.spec.settings), "creator_id": user_id, "collection_id": None,
            "result_metadata": None, "query_type": "query", "database_id": root.database_id,
            "table_id": root.table_id, "type": "question", "parameters": [], "archived": False,
            "enable_embedding": False, "embedding_params": None, "cache_ttl": None, "card_score": round(built.score, 2)}


def text_card(text: str, row: int, col: int = 0, width: int = GRID_WIDTH, height: int = 1) -> dict:
    return {"row": row, "col": col, "size_x": width, "size_y": height, "card": None, "card_id": None,
            "series": [], "parameter_mappings": [],
            "visualization_settings": {"virtual_card": {"name": None, "display": "text", "dataset_query": {},
                                                        "visualization_settings": {}, "archived": False},
                                       "text": text, "dashcard.background": False, "text.align_vertical": "bottom"}}


def _param_type(col: Col) -> tuple[str, str]:
    if types.isa(col.effective_type, "type/Temporal"):
        return "date/all-options", "date"
    if types.isa(col.semantic_type, "type/Address"):
        return "string/=", "location"
    if types.isa(col.effective_type, "type/Number"):
        return "number/=", "number"
    return "string/=", "string"


def parameters(template: Template, root: Root, bound: dict) -> list[tuple[dict, Col]]:
    out, seen = [], set()
    for name in template.dashboard_filters:
        if name not in bound:
            continue
        col = bound[name][0][0]
        key = (col.id, col.name, col.via)
        if key in seen:
            continue
        seen.add(key)
        kind, section = _param_type(col)
        pid = hashlib.sha1(f"{root.url}/{name}/{key}".encode()).hexdigest()[:8]
        title = label(col)
        out.append(({"id": pid, "name": title, "slug": name.lower(), "type": kind, "sectionId": section,
                     "default": None}, col))
        if len(out) == MAX_FILTERS:
            break
    return out


class Grid:
    """Cards placed left to right, a new row when the next does not fit."""

    def __init__(self, row: int = 0):
        self.row, self.col, self.height = row, 0, 0

    def place(self, width: int, height: int) -> tuple[int, int]:
        width = min(width, GRID_WIDTH)
        if self.col + width > GRID_WIDTH:
            self.newline()
        at = (self.row, self.col)
        self.col += width
        self.height = max(self.height, height)
        return at

    def newline(self) -> int:
        if self.col:
            self.row += self.height
        self.col, self.height = 0, 0
        return self.row


def dashcard(card: dict, row: int, col: int, width: int, height: int, params: list) -> dict:
    mappings = [{"parameter_id": p["id"], "target": ["dimension", c.ref()]} for p, c in params]
    return {"row": row, "col": col, "size_x": width, "size_y": height, "card": card, "card_id": None,
            "series": [], "parameter_mappings": mappings, "visualization_settings": {}}


def layout(template: Template, root: Root, built: list[Built], params: list, user_id: int) -> list[dict]:
    groups = list(template.groups) + sorted({b.spec.group or "" for b in built} - set(template.groups))
    grid, dashcards = Grid(), []
    for group in groups:
        members = [b for b in built if (b.spec.group or "") == group]
        if not members:
            continue
        if group and len(groups) > 1:
            row = grid.newline()
            dashcards.append(text_card("# " + interpolate(template.groups.get(group, group), root), row))
            grid.row += 1
        for b in members:
            row, col = grid.place(b.spec.width, b.spec.height)
            dashcards.append(dashcard(card_json(root, b, user_id), row, col, b.spec.width, b.spec.height, params))
    for index, item in enumerate(dashcards):
        item["id"] = -(index + 1)
    return dashcards


def param_fields(params: list) -> dict:
    return {str(c.id): {"id": c.id, "table_id": c.table_id, "display_name": c.display_name, "name": c.name,
                        "base_type": c.effective_type, "semantic_type": c.semantic_type}
            for _, c in params if c.id is not None}
