"""The many-people bench's content: the Sample Database, result caching on, 100 users each logged in with
their own session, 40 MBQL cards (a cache_ttl on each) spread over the root and four collections, and 8
dashboards of 5 cards. Made through the API of an app on the bench's data directory, so the gunicorn
servers started on that directory find it; the app DB is the SQLite file there, or a PostgreSQL URL.
"""
from __future__ import annotations

import itertools
import tempfile
from dataclasses import dataclass
from pathlib import Path

USER_PASSWORD = "Bench-People-Pass-1"
# Words of the cards' and dashboards' names: the search scenario asks for one of them at random.
SEARCH_TERMS = ("orders", "revenue", "products", "people", "reviews", "month", "category", "state",
                "average", "count", "overview", "rating")


@dataclass
class PeopleContent:
    data_dir: Path
    db_url: str | None
    admin_token: str
    tokens: tuple[str, ...]  # one login session per user
    cards: tuple[int, ...]
    dashboards: tuple[int, ...]
    dashcards: tuple[tuple[int, int, int], ...]  # (dashboard, dashcard, card)


def _ok(response, what: str):
    if response.status_code not in (200, 202, 204):
        raise RuntimeError(f"setting up {what}: {response.status_code} {response.get_data(as_text=True)[:500]}")
    return response.json if response.status_code != 204 else {}


def _card_queries(tables: dict[str, dict]) -> list[tuple[str, dict]]:
    """Forty (name, MBQL inner query) over the Sample Database's four tables: rows, and counts, sums and
    averages broken out by categories, dates and joined columns, as a team's saved questions are."""
    def f(table: str, column: str, **options) -> list:
        return ["field", tables[table]["fields"][column], options or None]

    orders, products, people, reviews = (tables[t]["id"] for t in ("ORDERS", "PRODUCTS", "PEOPLE", "REVIEWS"))
    via_product = {"source-field": tables["ORDERS"]["fields"]["PRODUCT_ID"]}
    via_user = {"source-field": tables["ORDERS"]["fields"]["USER_ID"]}
    measures = [("count", ["count"]), ("revenue", ["sum", f("ORDERS", "TOTAL")]),
                ("average total", ["avg", f("ORDERS", "TOTAL")]), ("average discount", ["avg", f("ORDERS", "DISCOUNT")])]
    breakouts = [("by month", f("ORDERS", "CREATED_AT", **{"temporal-unit": "month"})),
                 ("by year", f("ORDERS", "CREATED_AT", **{"temporal-unit": "year"})),
                 ("by product category", f("PRODUCTS", "CATEGORY", **via_product)),
                 ("by customer state", f("PEOPLE", "STATE", **via_user)),
                 ("by quantity", f("ORDERS", "QUANTITY")),
                 ("by customer source", f("PEOPLE", "SOURCE", **via_user)),
                 ("by week", f("ORDERS", "CREATED_AT", **{"temporal-unit": "week"}))]
    out = [(f"Orders {measure} {breakout}", {"source-table": orders, "aggregation": [aggregation],
                                               "breakout": [column]})
           for (measure, aggregation), (breakout, column) in itertools.product(measures, breakouts)]  # 28
    out += [
        ("Orders, latest 100", {"source-table": orders, "limit": 100,
                                "order-by": [["desc", f("ORDERS", "CREATED_AT")]]}),
        ("Products, every row", {"source-table": products}),
        ("Products count by category", {"source-table": products, "aggregation": [["count"]],
                                        "breakout": [f("PRODUCTS", "CATEGORY")]}),
        ("Products average rating by vendor", {"source-table": products, "limit": 50,
                                              "aggregation": [["avg", f("PRODUCTS", "RATING")]],
                                              "breakout": [f("PRODUCTS", "VENDOR")]}),
        ("People count by state", {"source-table": people, "aggregation": [["count"]],
                                  "breakout": [f("PEOPLE", "STATE")]}),
        ("People by source and year", {"source-table": people, "aggregation": [["count"]],
                                      "breakout": [f("PEOPLE", "SOURCE"),
                                                   f("PEOPLE", "CREATED_AT", **{"temporal-unit": "year"})]}),
        ("People, latest 200", {"source-table": people, "limit": 200,
                                "order-by": [["desc", f("PEOPLE", "CREATED_AT")]]}),
        ("Reviews count by rating", {"source-table": reviews, "aggregation": [["count"]],
                                    "breakout": [f("REVIEWS", "RATING")]}),
        ("Reviews, latest 100", {"source-table": reviews, "limit": 100,
                                 "order-by": [["desc", f("REVIEWS", "CREATED_AT")]]}),
        ("Large orders count", {"source-table": orders, "aggregation": [["count"]],
                               "filter": [">", f("ORDERS", "TOTAL"), 100]}),
        ("Orders revenue of Widgets by month", {"source-table": orders, "aggregation": [["sum", f("ORDERS", "TOTAL")]],
                                               "filter": ["=", f("PRODUCTS", "CATEGORY", **via_product), "Widget"],
                                               "breakout": [f("ORDERS", "CREATED_AT", **{"temporal-unit": "month"})]}),
        ("Reviews average rating by product category",
         {"source-table": reviews, "aggregation": [["avg", f("REVIEWS", "RATING")]],
          "breakout": [f("PRODUCTS", "CATEGORY", **{"source-field": tables["REVIEWS"]["fields"]["PRODUCT_ID"]})]}),
    ]
    assert len(out) == 40, len(out)
    return out


def app_config(data_dir: Path, db_url: str | None) -> dict:
    from core.testing import FAST_HASHING

    config = {"TESSERA_DATA_DIR": str(data_dir), "TESSERA_PLUGINS_AUTOLOAD": False,
              "TESSERA_LOAD_SAMPLE_DATABASE": True, "TESSERA_SYNC_IN_FOREGROUND": True, **FAST_HASHING}
    if db_url:
        config["TESSERA_DB_URL"] = db_url
    return config


def prepare_people(users: int = 100, db_url: str | None = None, cache_hours: int = 24) -> PeopleContent:
    """A new data directory with the content above; the app that made it is disposed of."""
    from core.assembly.app import create_app
    from core.testing import make_user, setup_admin
    from core.testing.app import wait_for_sync

    data_dir = Path(tempfile.mkdtemp(prefix="tessera-people-"))
    app = create_app(app_config(data_dir, db_url))
    try:
        wait_for_sync(app)
        admin = setup_admin(app)
        _ok(admin.put("/api/setting/enable-query-caching", json={"value": True}), "caching")
        database = next(db for db in _ok(admin.get("/api/database"), "databases")["data"] if db.get("is_sample"))
        metadata = _ok(admin.get(f"/api/database/{database['id']}/metadata"), "metadata")
        tables = {t["name"]: {"id": t["id"], "fields": {f["name"]: f["id"] for f in t["fields"]}}
                  for t in metadata["tables"]}
        collections = [_ok(admin.post("/api/collection", json={"name": name, "color": "#509EE3"}), name)["id"]
                       for name in ("Sales", "Marketing", "Product", "Finance")]
        cards = []
        for number, (name, query) in enumerate(_card_queries(tables)):
            body = {"name": name, "display": "table" if "limit" in query or "aggregation" not in query else "line",
                    "visualization_settings": {}, "cache_ttl": cache_hours,
                    "collection_id": None if number % 5 == 0 else collections[number % 4],
                    "dataset_query": {"database": database["id"], "type": "query", "query": query}}
            cards.append(_ok(admin.post("/api/card", json=body), name)["id"])
        dashboards, dashcards = [], []
        names = ("Orders overview", "Revenue by month", "Products and reviews", "People overview",
                 "Sales state overview", "Category revenue", "Average order overview", "Weekly count overview")
        for number, name in enumerate(names):
            dashboard = _ok(admin.post("/api/dashboard", json={
                "name": name, "collection_id": None if number % 2 == 0 else collections[number % 4]}), name)["id"]
            its_cards = cards[number * 5:number * 5 + 5]
            layout = [{"id": -(i + 1), "card_id": card, "size_x": 12, "size_y": 6, "row": (i // 2) * 6,
                       "col": (i % 2) * 12} for i, card in enumerate(its_cards)]
            saved = _ok(admin.put(f"/api/dashboard/{dashboard}", json={"dashcards": layout}), "dashcards")
            dashboards.append(dashboard)
            dashcards += [(dashboard, dc["id"], dc["card_id"]) for dc in saved["dashcards"]]
        tokens = [make_user(app, email=f"person{number}@example.com", first_name=f"Person{number}",
                            last_name="Bench", password=USER_PASSWORD).headers["X-Metabase-Session"]
                  for number in range(users)]
        return PeopleContent(data_dir=data_dir, db_url=db_url, admin_token=admin.headers["X-Metabase-Session"],
                             tokens=tuple(tokens), cards=tuple(cards), dashboards=tuple(dashboards),
                             dashcards=tuple(dashcards))
    finally:
        app.extensions["tessera"].db.dispose()


def server_env(content: PeopleContent) -> dict:
    """The gunicorn workers' configuration: the same data directory and app DB, migrated already."""
    from core.testing import FAST_HASHING

    env = {"TESSERA_DATA_DIR": str(content.data_dir), "TESSERA_PLUGINS_AUTOLOAD": "false",
           "TESSERA_RUN_MIGRATIONS": "false",
           **{key: str(value) for key, value in FAST_HASHING.items()}}
    if content.db_url:
        env["TESSERA_DB_URL"] = content.db_url
    return env
