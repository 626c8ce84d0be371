"""Issue 16's "Done when": each display's card, saved through the API and run through the API, is
drawn to PNG and PDF by the core renderer (core.charts.render_card, as the sharing and subscription
plugins will call it)."""
from __future__ import annotations

import pytest

from core.charts import render_card
from tests.plugins.cards.fixtures import card_body, native_query

from .support import read_png

SQL = "SELECT first_name, age, id * 10 AS score FROM people ORDER BY id"
DISPLAYS = {
    "table": {}, "scalar": {}, "smartscalar": {}, "bar": {"graph.dimensions": ["first_name"],
                                                        "graph.metrics": ["age"]},
    "stacked-bar": {"graph.dimensions": ["first_name"], "graph.metrics": ["age", "score"],
                    "stackable.stack_type": "stacked"},
    "line": {"graph.dimensions": ["first_name"], "graph.metrics": ["age"]},
    "area": {"graph.dimensions": ["first_name"], "graph.metrics": ["age", "score"],
             "stackable.stack_type": "normalized"},
    "row": {"graph.dimensions": ["first_name"], "graph.metrics": ["age"]},
    "combo": {"graph.dimensions": ["first_name"], "graph.metrics": ["age", "score"]},
    "pie": {"pie.dimension": "first_name", "pie.metric": "age"},
    "scatter": {"graph.dimensions": ["age"], "graph.metrics": ["score"]},
    "funnel": {"funnel.dimension": "first_name", "funnel.metric": "age"},
    "progress": {"progress.goal": 100}, "gauge": {}, "waterfall": {"graph.dimensions": ["first_name"],
                                                                   "graph.metrics": ["age"]},
    "pivot": {}, "object": {},
}


@pytest.mark.parametrize("name", sorted(DISPLAYS))
def test_saved_card_renders_to_png_and_pdf(admin, warehouse, name):
    display = "bar" if name == "stacked-bar" else name
    saved = admin.post("/api/card", json=card_body(name, native_query(warehouse["db"], SQL), display=display,
                                                   visualization_settings=DISPLAYS[name]))
    assert saved.status_code == 200, saved.json
    card = admin.get(f"/api/card/{saved.json['id']}").json
    ran = admin.post(f"/api/card/{card['id']}/query")
    assert ran.status_code == 202, ran.json
    png = render_card(card, ran.json, "png", width=400, height=260)
    assert read_png(png)[:2] == (400, 260)
    assert render_card(card, ran.json, "pdf", width=400, height=260).startswith(b"%PDF-")
