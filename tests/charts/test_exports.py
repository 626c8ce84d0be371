"""png, svg and pdf from the export routes: /api/dataset (display form field, a table by default), a
saved card (its display and settings) and a dashboard card (the dashcard's settings over the card's),
with width/height/theme/scale, and the download permission still deciding."""
from __future__ import annotations

import json

from tests.plugins.cards.fixtures import card_body, native_query
from tests.plugins.dashboards.support import make_dashboard

from .support import read_png

SQL = "SELECT first_name, age FROM people ORDER BY id"


def test_dataset_png_svg_pdf(admin, warehouse):
    query = native_query(warehouse["db"], SQL)
    png = admin.post("/api/dataset/png?width=320&height=200", json={"query": query})
    assert png.status_code == 200, png.data
    assert png.headers["Content-Type"] == "image/png" and ".png" in png.headers["Content-Disposition"]
    assert read_png(png.data)[:2] == (320, 200)
    svg = admin.post("/api/dataset/svg", data={"query": json.dumps(query), "visualization_settings": "{}"})
    assert svg.headers["Content-Type"] == "image/svg+xml"
    assert b"Grace" in svg.data and b"Showing 3 rows" in svg.data  # the default display is a table
    scalar = admin.post("/api/dataset/svg", data={"query": json.dumps(query), "display": "scalar"})
    assert b"Grace" not in scalar.data and b">36<" in scalar.data  # the first row of the numeric column
    pdf = admin.post("/api/dataset/pdf", json={"query": query, "display": "scalar"})
    assert pdf.headers["Content-Type"] == "application/pdf" and pdf.data.startswith(b"%PDF-")


def test_query_parameters_are_validated(admin, warehouse):
    query = native_query(warehouse["db"], SQL)
    assert admin.post("/api/dataset/png?width=0", json={"query": query}).status_code == 400
    assert admin.post("/api/dataset/png?theme=neon", json={"query": query}).status_code == 400
    assert admin.post("/api/dataset/png?scale=9", json={"query": query}).status_code == 400
    retina = admin.post("/api/dataset/png?width=200&height=100&scale=2&theme=dark", json={"query": query})
    width, height, rows = read_png(retina.data)
    assert (width, height) == (400, 200) and rows[0][:3] == bytes.fromhex("2B2F36")


def test_card_chart_uses_its_display_and_settings(admin, user, warehouse):
    settings = {"column_settings": {'["name","age"]': {"prefix": "~", "suffix": " yrs"}}}
    card = admin.post("/api/card", json=card_body("Age", native_query(warehouse["db"], SQL), display="scalar",
                                                  visualization_settings=settings)).json
    svg = admin.post(f"/api/card/{card['id']}/query/svg?width=300")
    assert svg.status_code == 200, svg.data
    assert b"~36 yrs" in svg.data and b'width="300"' in svg.data
    assert user.post(f"/api/card/{card['id']}/query/png").status_code == 200
    graph = admin.get("/api/permissions/graph").json
    graph["groups"]["1"][str(warehouse["db"])]["download"] = {"schemas": "none"}
    assert admin.put("/api/permissions/graph", json=graph).status_code == 200
    refused = user.post(f"/api/card/{card['id']}/query/png")
    assert refused.status_code == 403 and not refused.data.startswith(b"\x89PNG")


def test_dashcard_chart_takes_the_dashcard_settings(app, admin, warehouse):
    card = admin.post("/api/card", json=card_body("Age", native_query(warehouse["db"], SQL),
                                                  display="scalar")).json["id"]
    over = {"column_settings": {'["name","age"]': {"suffix": " years"}}}
    dash = make_dashboard(app, admin.user["id"], [], [{"card_id": card, "visualization_settings": over}])
    url = f"/api/dashboard/{dash['id']}/dashcard/{dash['dashcards'][0]}/card/{card}/query"
    svg = admin.post(f"{url}/svg")
    assert svg.status_code == 200, svg.data
    assert b"36 years" in svg.data
    png = admin.post(f"{url}/png?width=250&height=150")
    assert read_png(png.data)[:2] == (250, 150)
    assert admin.post(f"{url}/pdf").data.startswith(b"%PDF-")
