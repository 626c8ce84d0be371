"""Comparison dashboards: every card of an x-ray twice, side by side, once on "this" (the entity, a
cell of it) and once on "that" (a table, segment or ad-hoc query over the same source)."""
from __future__ import annotations

from core.http.errors import Invalid

from . import dashboard
from .bind import Built
from .roots import Root

HALF = dashboard.GRID_WIDTH // 2


def dashcards(this: Root, that: Root, built: list[Built], params: list, user_id: int) -> list[dict]:
    if this.source != that.source:
        raise Invalid("Can only compare entities that read the same table or saved question.")
    out = [dashboard.text_card(f"## {this.name}", 0, 0, HALF, 1), dashboard.text_card(f"## {that.name}", 0, HALF, HALF, 1)]
    row = 1
    for b in built:
        height = b.spec.height
        for root, col in ((this, 0), (that, HALF)):
            card = dashboard.card_json(root, b, user_id, title=f"{b.title} ({root.name})")
            out.append(dashboard.dashcard(card, row, col, HALF, height, params))
        row += height
    for index, item in enumerate(out):
        item["id"] = -(index + 1)
    return out
