"""Where a dashboard page's content comes from: a saved dashboard (GET /api/dashboard/:id) or the
x-ray of a table (GET /api/automagic-dashboards/table/:id), both drawn by the same page and card
fragments. A board answers what differs between them: how one of its cards is run with the page's
filters, where a filter's list of values comes from, and where a card's download is posted.

Saved dashboards run their cards through the dashcard query endpoints (the server maps each filter
onto the card); an x-ray's cards are not saved, so they run as ad-hoc queries (POST /api/dataset)
with each filter's target taken from the dashcard's parameter_mappings, as Metabase's frontend does.
An x-ray's value list is chained by the other filters' values as a saved dashboard's is: the distinct
values of the filter's column, asked as an ad-hoc query with the other filters as its parameters.
A dashcard's series cards (drawn combined with its card) run the same way, each as its own query.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from urllib.parse import quote

import orjson
from werkzeug.exceptions import NotFound

from core.http.internal import Answer, call

from . import cards, render
from .filters import Filter, api_parameters, constraints
from .views import slug

# Virtual cards: drawn from the dashcard's own settings, never run.
VIRTUAL = frozenset({"text", "heading", "link", "placeholder", "iframe", "action"})
# A chained value list's length, as the API's parameter value lists (more is `has_more_values`).
VALUES_LIMIT = 1000


class Board(ABC):
    """A dashboard as the page shows it: the API's JSON (`data`) and the page's own path."""

    saved = False

    def __init__(self, data: dict, path: str):
        self.data = data
        self.path = path

    @property
    def name(self) -> str:
        return str(self.data.get("name") or "")

    @property
    def parameters(self) -> list[dict]:
        return [p for p in self.data.get("parameters") or [] if isinstance(p, dict) and p.get("id")]

    @property
    def tabs(self) -> list[dict]:
        return sorted((t for t in self.data.get("tabs") or [] if isinstance(t, dict)),
                      key=lambda t: (t.get("position") or 0, t.get("id") or 0))

    def tab(self, wanted: str | None) -> dict | None:
        """The tab `?tab=<id>-<slug>` names (Metabase's URL), else the first one."""
        tabs = self.tabs
        head = str(wanted or "").split("-", 1)[0]
        for tab in tabs:
            if head and str(tab.get("id")) == head:
                return tab
        return tabs[0] if tabs else None

    def dashcards(self, tab: dict | None) -> list[dict]:
        """The cards of a tab in reading order (row, then column)."""
        cards = [d for d in self.data.get("dashcards") or [] if isinstance(d, dict)
                 and (tab is None or d.get("dashboard_tab_id") in (None, tab.get("id")))]
        return sorted(cards, key=lambda d: (d.get("row") or 0, d.get("col") or 0))

    def dashcard(self, dashcard_id: int) -> dict:
        for dashcard in self.data.get("dashcards") or []:
            if isinstance(dashcard, dict) and dashcard.get("id") == dashcard_id:
                return dashcard
        raise NotFound()

    def card_path(self, dashcard: dict) -> str:
        return f"{self.path}/card/{dashcard['id']}"

    @abstractmethod
    def run(self, dashcard: dict, filters: list[Filter]) -> Answer:
        """The API's answer to the card's query with the page's filters."""

    def series(self, dashcard: dict, filters: list[Filter]) -> list[tuple[dict, dict]]:
        """The dashcard's series cards the user may read, each with its query's result under the page's
        filters; a card the API hid (shown as its id alone) or would not run for the user is left out."""
        found = []
        for card in dashcard.get("series") or []:
            if not isinstance(card, dict) or type(card.get("id")) is not int or "display" not in card:
                continue
            answer = self.run_series(dashcard, card, filters)
            if answer.ok and isinstance(answer.body, dict) and answer.body.get("status") != "failed":
                found.append((card, answer.body))
        return found

    @abstractmethod
    def run_series(self, dashcard: dict, card: dict, filters: list[Filter]) -> Answer:
        """The API's answer to one of the dashcard's series cards' query with the page's filters."""

    @abstractmethod
    def values(self, parameter: dict, filters: list[Filter], query: str | None) -> Answer:
        """The API's list of a filter's values ({values, has_more_values}), those holding `query` if given."""

    @abstractmethod
    def download(self, dashcard: dict, filters: list[Filter], export_format: str) -> tuple[str, dict[str, str]]:
        """Where a browser posts the card's download form, and the form's fields."""


class SavedBoard(Board):
    saved = True

    @property
    def id(self) -> int:
        return int(self.data["id"])

    def _query_path(self, dashcard: dict, card_id: int | None = None) -> str:
        card_id = dashcard["card_id"] if card_id is None else card_id
        return f"/api/dashboard/{self.id}/dashcard/{dashcard['id']}/card/{card_id}/query"

    def run(self, dashcard, filters):
        return call("POST", self._query_path(dashcard), json={"parameters": api_parameters(filters)})

    def run_series(self, dashcard, card, filters):
        # The server maps each filter onto the series card by the dashcard's mappings naming that card.
        return call("POST", self._query_path(dashcard, card["id"]), json={"parameters": api_parameters(filters)})

    def values(self, parameter, filters, query):
        key = str(parameter["id"])
        path = f"/api/dashboard/{self.id}/params/{quote(key, safe='')}/"
        path += f"search/{quote(query, safe='')}" if query else "values"
        return call("GET", path, query=constraints(filters, key))

    def download(self, dashcard, filters, export_format):
        fields = {"parameters": orjson.dumps(api_parameters(filters)).decode(), "format_rows": "true"}
        return f"{self._query_path(dashcard)}/{export_format}", fields


class XrayBoard(Board):
    def _parameters(self, dashcard: dict, filters: list[Filter]) -> list[dict]:
        """The filters with a value, each with this card's target (filters not mapped to it are left out)."""
        targets = {m.get("parameter_id"): m.get("target") for m in dashcard.get("parameter_mappings") or []
                   if isinstance(m, dict)}
        return [{**p, "target": targets[p["id"]]} for p in api_parameters(filters) if targets.get(p["id"])]

    def _query(self, dashcard: dict, filters: list[Filter]) -> dict:
        card = dashcard.get("card") or {}
        return {**(card.get("dataset_query") or {}), "parameters": self._parameters(dashcard, filters)}

    def run(self, dashcard, filters):
        return call("POST", "/api/dataset", json=self._query(dashcard, filters))

    def run_series(self, dashcard, card, filters):
        # A series card takes the filters mapped onto it (mappings naming its card id), as the main card.
        mappings = [m for m in dashcard.get("parameter_mappings") or []
                    if isinstance(m, dict) and m.get("card_id") == card["id"]]
        return call("POST", "/api/dataset", json=self._query({"card": card, "parameter_mappings": mappings}, filters))

    def values(self, parameter, filters, query):
        chained = self._chained_values(parameter, filters, query)
        if chained is not None:
            return chained
        # The fields the filter is wired to on any card (Metabase asks for an unsaved dashboard's values so).
        mappings = [m for d in self.data.get("dashcards") or [] if isinstance(d, dict)
                    for m in d.get("parameter_mappings") or []
                    if isinstance(m, dict) and m.get("parameter_id") == parameter["id"]]
        field_ids = sorted({i for i in (_field_id(m.get("target")) for m in mappings) if i is not None})
        body = {"parameter": parameter, "field_ids": field_ids}
        path = f"/api/dataset/parameter/search/{quote(query, safe='')}" if query else "/api/dataset/parameter/values"
        return call("POST", path, json=body)

    def _chained_values(self, parameter: dict, filters: list[Filter], query: str | None) -> Answer | None:
        """The filter's values where the other filters' values hold, as a saved dashboard's lists are
        chained: the distinct values of its column (POST /api/dataset, the card's table with the other
        filters mapped onto the same card as its parameters). None while no other filter has a value, or
        when no card maps this filter and another one with a value (the plain list is given then)."""
        others = [f for f in filters if f.id != parameter["id"] and f.value is not None]
        if not others:
            return None
        for dashcard in self.data.get("dashcards") or []:
            if not isinstance(dashcard, dict):
                continue
            source = ((dashcard.get("card") or {}).get("dataset_query") or {})
            inner = source.get("query") if isinstance(source.get("query"), dict) else None
            target = next((m.get("target") for m in dashcard.get("parameter_mappings") or []
                           if isinstance(m, dict) and m.get("parameter_id") == parameter["id"]), None)
            chained = self._parameters(dashcard, others)
            if inner is None or "source-table" not in inner or _field_ref(target) is None or not chained:
                continue
            column = _field_ref(target)
            stage: dict = {"source-table": inner["source-table"], "breakout": [column],
                           "order-by": [["asc", column]], "limit": VALUES_LIMIT + 1}
            if query and str(parameter.get("type") or "").startswith(("string", "category")):
                stage["filter"] = ["contains", column, query, {"case-sensitive": False}]
            answer = call("POST", "/api/dataset", json={"database": source.get("database"), "type": "query",
                                                         "query": stage, "parameters": chained})
            result = answer.body if isinstance(answer.body, dict) else {}
            if not answer.ok or result.get("status") == "failed":
                return Answer(answer.status if answer.status >= 400 else 400,
                              {"message": str(result.get("error") or answer.message or "")})
            rows = [row for row in (result.get("data") or {}).get("rows") or [] if row and row[0] is not None]
            if query:
                rows = [row for row in rows if query.lower() in str(row[0]).lower()]
            return Answer(200, {"values": [[row[0]] for row in rows[:VALUES_LIMIT]],
                                "has_more_values": len(rows) > VALUES_LIMIT})
        return None

    def download(self, dashcard, filters, export_format):
        card = dashcard.get("card") or {}
        settings = cards.settings(dashcard)
        return f"/api/dataset/{export_format}", {
            "query": orjson.dumps(self._query(dashcard, filters)).decode(),
            "visualization_settings": orjson.dumps(settings).decode(),
            "display": str(card.get("display") or "table"), "format_rows": "true"}


def _field_ref(target) -> list | None:
    """The field reference of a ["dimension", ["field", ...]] target (None for anything else)."""
    if isinstance(target, list) and len(target) >= 2 and isinstance(target[1], list) and target[1][:1] == ["field"]:
        return target[1]
    return None


def _field_id(target) -> int | None:
    """The field id of a ["dimension", ["field", id, opts]] target (None for anything else)."""
    if (isinstance(target, list) and len(target) >= 2 and isinstance(target[1], list) and len(target[1]) >= 2
            and target[1][0] == "field" and type(target[1][1]) is int):
        return target[1][1]
    return None


def saved(dashboard_id: int, *, count_view: bool = True) -> SavedBoard:
    """The saved dashboard as the signed-in user may read it (the API's 403/404 become the error page)."""
    data = render.read(f"/api/dashboard/{dashboard_id}", ignore_view=None if count_view else True)
    return SavedBoard(data, f"/dashboard/{data['id']}-{slug(data.get('name'))}".rstrip("-"))


def xray(path: str) -> XrayBoard:
    """The x-ray at `path` ("table/5", "adhoc/<base64>", with a "/cell/<base64>" and a "/compare/..."
    part: checked by the route), as GET /api/automagic-dashboards/<path> gives it to the signed-in user."""
    data = render.read(f"/api/automagic-dashboards/{path}")
    return XrayBoard(data, f"/auto/dashboard/{path}")
