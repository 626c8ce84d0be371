"""A dashboard being edited (the draft): what the edit page holds between its requests, and the one PUT
/api/dashboard/:id body it becomes on save.

The draft travels with the page (a hidden JSON field of the editor's form), so nothing is written until
Save, Cancel is leaving the page, and two tabs of the same browser never mix their edits. Each change the
page asks for (`apply`) reads the form's fields into the draft, then makes one change; the API validates
the whole thing once, on save, in its single transaction. `_cards` keeps what the editor draws of each
saved question (name, display, visualization settings, mappable columns) so a change does not read every
card again; it is never sent to the API, nor is `viz`, the card whose visualization settings are open.
"""
from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass

import orjson

GRID_WIDTH = 24
MAX_HEIGHT = 40  # dashboard.css draws h-1 .. h-40
# Metabase's default sizes of a new card (its visualizations' defaultSize), by display.
DEFAULT_SIZES = {"scalar": (6, 3), "smartscalar": (6, 3), "progress": (6, 3), "gauge": (6, 4), "table": (12, 6),
                 "text": (12, 3), "heading": (24, 1), "link": (8, 1)}
DEFAULT_SIZE = (12, 6)
VIRTUAL_KINDS = ("text", "heading", "link")
# Filter types the editor adds (Metabase's parameter types and sections).
FILTER_TYPES = {"date": ("date/all-options", "date", "Date"), "string": ("string/=", "string", "Text or category"),
                "number": ("number/=", "number", "Number"), "id": ("id", "id", "ID"),
                "location": ("string/=", "location", "Location")}


class DraftError(Exception):
    """A change the draft cannot take (shown on the page as a 400)."""


@dataclass
class Draft:
    data: dict

    # -- reading and writing -------------------------------------------------------------------------

    @classmethod
    def of_dashboard(cls, dashboard: dict, cards: dict) -> Draft:
        """The draft of a dashboard as GET /api/dashboard/:id gave it; `cards`: card id -> what the editor
        draws of it."""
        tabs = [{"id": t["id"], "name": t.get("name") or "Tab"} for t in sorted(
            (t for t in dashboard.get("tabs") or [] if isinstance(t, dict)), key=lambda t: (t.get("position") or 0, t["id"]))]
        dashcards = []
        for d in dashboard.get("dashcards") or []:
            if not isinstance(d, dict):
                continue
            dashcards.append({
                "id": d["id"], "card_id": d.get("card_id"), "dashboard_tab_id": d.get("dashboard_tab_id"),
                "row": d.get("row") or 0, "col": d.get("col") or 0, "size_x": d.get("size_x") or 4,
                "size_y": d.get("size_y") or 4, "action_id": d.get("action_id"),
                "parameter_mappings": [m for m in d.get("parameter_mappings") or [] if isinstance(m, dict)],
                "visualization_settings": d.get("visualization_settings") or {},
                "series": [{"id": s["id"]} for s in d.get("series") or [] if isinstance(s, dict) and "id" in s]})
        return cls({"id": dashboard["id"], "version": version(dashboard),
                    "name": dashboard.get("name") or "", "description": dashboard.get("description") or "",
                    "tabs": tabs, "tab": tabs[0]["id"] if tabs else None, "dashcards": dashcards,
                    "parameters": [p for p in dashboard.get("parameters") or [] if isinstance(p, dict)],
                    "next": -1, "_cards": {str(k): v for k, v in cards.items()}})

    @classmethod
    def parse(cls, text: object, dashboard_id: int) -> Draft:
        try:
            data = orjson.loads(text) if isinstance(text, str) else None
        except orjson.JSONDecodeError:
            data = None
        if (not isinstance(data, dict) or data.get("id") != dashboard_id
                or not all(isinstance(data.get(k), list) for k in ("tabs", "dashcards", "parameters"))
                or not isinstance(data.get("_cards"), dict) or type(data.get("next")) is not int
                or not (data.get("viz") is None or type(data.get("viz")) is int)):
            raise DraftError("The page's draft of this dashboard is unreadable: reload the editor.")
        if not (all(_dashcard_ok(d) for d in data["dashcards"]) and all(_card_ok(c) for c in data["_cards"].values())
                and all(isinstance(p, dict) and isinstance(p.get("id"), str) and isinstance(p.get("type"), str)
                        and isinstance(p.get("name", ""), str) for p in data["parameters"])
                and all(isinstance(t, dict) and type(t.get("id")) is int and isinstance(t.get("name"), str)
                        for t in data["tabs"])):
            raise DraftError("The page's draft of this dashboard is unreadable: reload the editor.")
        return cls(data)

    def dumps(self) -> str:
        return orjson.dumps(self.data).decode()

    def put_body(self) -> dict:
        """The whole dashboard as one PUT /api/dashboard/:id: name, description, tabs, dashcards, parameters."""
        keys = ("id", "card_id", "dashboard_tab_id", "row", "col", "size_x", "size_y", "action_id",
                "parameter_mappings", "visualization_settings", "series")
        tab_ids = {t["id"] for t in self.tabs}
        dashcards = []
        for d in self.dashcards:
            out = {k: d.get(k) for k in keys}
            if not tab_ids:
                out["dashboard_tab_id"] = None
            if out["action_id"] is None:
                del out["action_id"]
            dashcards.append(out)
        return {"name": self.data.get("name") or "", "description": self.data.get("description") or None,
                "tabs": [{"id": t["id"], "name": t["name"]} for t in self.tabs],
                "dashcards": dashcards, "parameters": self.parameters}

    # -- parts ----------------------------------------------------------------------------------------

    @property
    def tabs(self) -> list[dict]:
        return self.data["tabs"]

    @property
    def dashcards(self) -> list[dict]:
        return self.data["dashcards"]

    @property
    def parameters(self) -> list[dict]:
        return self.data["parameters"]

    @property
    def current_tab(self) -> int | None:
        ids = [t["id"] for t in self.tabs]
        return self.data.get("tab") if self.data.get("tab") in ids else (ids[0] if ids else None)

    def on_tab(self, tab_id: int | None) -> list[dict]:
        return sorted((d for d in self.dashcards if tab_id is None or d.get("dashboard_tab_id") in (None, tab_id)),
                      key=lambda d: (d["row"], d["col"]))

    def card_info(self, dashcard: dict) -> dict:
        return self.data["_cards"].get(str(dashcard.get("card_id"))) or {}

    def dashcard(self, dashcard_id) -> dict:
        for d in self.dashcards:
            if str(d["id"]) == str(dashcard_id):
                return d
        raise DraftError("That card is not on this dashboard any more.")

    def parameter(self, parameter_id) -> dict:
        for p in self.parameters:
            if str(p.get("id")) == str(parameter_id):
                return p
        raise DraftError("That filter is not on this dashboard any more.")

    def _new_id(self) -> int:
        new = self.data["next"]
        taken = {d["id"] for d in self.dashcards} | {t["id"] for t in self.tabs}
        while new in taken:
            new -= 1
        self.data["next"] = new - 1
        return new

    # -- changes ---------------------------------------------------------------------------------------

    def _bottom(self, tab_id) -> int:
        return max((d["row"] + d["size_y"] for d in self.on_tab(tab_id)), default=0)

    def add_card(self, card_id: int, info: dict) -> dict:
        width, height = DEFAULT_SIZES.get(str(info.get("display")), DEFAULT_SIZE)
        self.data["_cards"][str(card_id)] = info
        return self._add({"card_id": card_id, "visualization_settings": {}}, width, height)

    def add_virtual(self, kind: str) -> dict:
        if kind not in VIRTUAL_KINDS:
            raise DraftError("Add a text, heading or link card.")
        width, height = DEFAULT_SIZES[kind]
        settings = {"virtual_card": {"name": None, "display": kind, "visualization_settings": {},
                                     "dataset_query": {}, "archived": False}}
        settings.update({"link": {"url": ""}} if kind == "link" else {"text": ""})
        return self._add({"card_id": None, "visualization_settings": settings}, width, height)

    def _add(self, dashcard: dict, width: int, height: int) -> dict:
        tab = self.current_tab
        dashcard = {"id": self._new_id(), "dashboard_tab_id": tab, "row": self._bottom(tab), "col": 0,
                    "size_x": width, "size_y": height, "parameter_mappings": [], "series": [], **dashcard}
        self.dashcards.append(dashcard)
        return dashcard

    def remove_card(self, dashcard_id) -> None:
        dashcard = self.dashcard(dashcard_id)
        self.dashcards.remove(dashcard)
        if self.data.get("viz") == dashcard["id"]:
            self.data["viz"] = None

    def place(self, dashcard_id, col: int, row: int, size_x: int, size_y: int) -> None:
        """Put a card at (col, row) with a size, kept on the grid; cards it would cover move down."""
        dashcard = self.dashcard(dashcard_id)
        size_x = min(max(size_x, 1), GRID_WIDTH)
        size_y = min(max(size_y, 1), MAX_HEIGHT)
        dashcard.update(size_x=size_x, size_y=size_y, col=min(max(col, 0), GRID_WIDTH - size_x), row=max(row, 0))
        self._push_down(dashcard)

    def _push_down(self, moved: dict) -> None:
        placed = [moved]
        others = sorted((d for d in self.on_tab(moved.get("dashboard_tab_id")) if d is not moved),
                        key=lambda d: (d["row"], d["col"]))
        for d in others:
            while any(_overlap(d, p) for p in placed):
                d["row"] = max(p["row"] + p["size_y"] for p in placed if _overlap(d, p))
            placed.append(d)

    def add_tab(self) -> dict:
        if not self.tabs:
            # Metabase's first "new tab" makes two: the cards already there go to the first.
            first = {"id": self._new_id(), "name": "Tab 1"}
            self.tabs.append(first)
            for d in self.dashcards:
                d["dashboard_tab_id"] = first["id"]
        tab = {"id": self._new_id(), "name": f"Tab {len(self.tabs) + 1}"}
        self.tabs.append(tab)
        self.data["tab"] = tab["id"]
        return tab

    def _tab(self, tab_id) -> dict:
        for t in self.tabs:
            if str(t["id"]) == str(tab_id):
                return t
        raise DraftError("That tab is not on this dashboard any more.")

    def move_tab(self, tab_id, step: int) -> None:
        tab = self._tab(tab_id)
        index = self.tabs.index(tab)
        to = min(max(index + step, 0), len(self.tabs) - 1)
        self.tabs.insert(to, self.tabs.pop(index))

    def delete_tab(self, tab_id) -> None:
        """A tab and its cards go; the last tab left takes the dashboard back to having none."""
        tab = self._tab(tab_id)
        self.tabs.remove(tab)
        self.data["dashcards"] = [d for d in self.dashcards if d.get("dashboard_tab_id") != tab["id"]]
        if len(self.tabs) == 1:
            self.tabs.clear()
            for d in self.dashcards:
                d["dashboard_tab_id"] = None
        self.data["tab"] = self.tabs[0]["id"] if self.tabs else None

    def card_to_tab(self, dashcard_id, tab_id) -> None:
        dashcard, tab = self.dashcard(dashcard_id), self._tab(tab_id)
        if dashcard.get("dashboard_tab_id") != tab["id"]:
            dashcard.update(dashboard_tab_id=tab["id"], row=self._bottom(tab["id"]), col=0)

    def add_filter(self, kind: str) -> dict:
        if kind not in FILTER_TYPES:
            raise DraftError("Choose the kind of filter to add.")
        kind_type, section, label = FILTER_TYPES[kind]
        names = {p.get("name") for p in self.parameters}
        name, n = label, 1
        while name in names:
            n += 1
            name = f"{label} {n}"
        parameter = {"id": secrets.token_hex(4), "name": name, "slug": slugged(name), "type": kind_type,
                     "sectionId": section}
        self.parameters.append(parameter)
        return parameter

    def remove_filter(self, parameter_id) -> None:
        parameter = self.parameter(parameter_id)
        self.parameters.remove(parameter)
        for d in self.dashcards:
            d["parameter_mappings"] = [m for m in d["parameter_mappings"] if m.get("parameter_id") != parameter["id"]]
        for p in self.parameters:
            if parameter["id"] in (p.get("filteringParameters") or []):
                p["filteringParameters"] = [i for i in p["filteringParameters"] if i != parameter["id"]]

    def wire(self, parameter_id, dashcard: dict, target, card_id: int | None = None) -> None:
        """Wire a filter to one of the card's columns (None: unwire it); `card_id` names one of the
        dashcard's series cards, else its own card."""
        parameter = self.parameter(parameter_id)
        card_id = card_id or dashcard.get("card_id")
        keep = [m for m in dashcard["parameter_mappings"]
                if not (m.get("parameter_id") == parameter["id"] and m.get("card_id") in (None, card_id))]
        if target is not None:
            mapping = {"parameter_id": parameter["id"], "target": target}
            if card_id:
                mapping["card_id"] = card_id
            keep.append(mapping)
        dashcard["parameter_mappings"] = keep

    def add_series(self, dashcard_id, card_id: int, info: dict) -> None:
        dashcard = self.dashcard(dashcard_id)
        if card_id == dashcard.get("card_id") or any(x["id"] == card_id for x in dashcard["series"]):
            raise DraftError("That question is already on this card.")
        self.data["_cards"][str(card_id)] = info
        dashcard["series"].append({"id": card_id})

    def remove_series(self, dashcard_id, card_id: str) -> None:
        dashcard = self.dashcard(dashcard_id)
        dashcard["series"] = [x for x in dashcard["series"] if str(x["id"]) != card_id]
        dashcard["parameter_mappings"] = [m for m in dashcard["parameter_mappings"] if str(m.get("card_id")) != card_id]

    def target_of(self, parameter_id, dashcard: dict, card_id: int | None = None):
        card_id = card_id or dashcard.get("card_id")
        for m in dashcard["parameter_mappings"]:
            if m.get("parameter_id") == parameter_id and m.get("card_id") in (None, card_id):
                return m.get("target")
        return None


def version(dashboard: dict) -> str:
    """What the dashboard is now, as a short digest of all a save would replace (its own row's updated_at and
    the tabs, cards and filters, which another editor may change without touching that row)."""
    parts = {"updated_at": str(dashboard.get("updated_at") or ""), "name": dashboard.get("name"),
             "description": dashboard.get("description"), "parameters": dashboard.get("parameters"),
             "tabs": [(t.get("id"), t.get("name"), t.get("position")) for t in dashboard.get("tabs") or []
                      if isinstance(t, dict)],
             "dashcards": [{k: d.get(k) for k in ("id", "card_id", "dashboard_tab_id", "row", "col", "size_x", "size_y",
                                                  "parameter_mappings", "visualization_settings")}
                           | {"series": [x.get("id") for x in d.get("series") or [] if isinstance(x, dict)]}
                           for d in dashboard.get("dashcards") or [] if isinstance(d, dict)]}
    return hashlib.sha256(orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)).hexdigest()[:32]


def _dashcard_ok(d) -> bool:
    """A dashcard the editor can place and draw (the API checks the rest on save)."""
    return (isinstance(d, dict) and type(d.get("id")) is int
            and all(type(d.get(k)) is int and 0 <= d[k] < 10_000 for k in ("row", "col", "size_x", "size_y"))
            and isinstance(d.get("parameter_mappings"), list) and all(isinstance(m, dict) for m in d["parameter_mappings"])
            and isinstance(d.get("series"), list) and all(isinstance(x, dict) for x in d["series"])
            and isinstance(d.get("visualization_settings"), dict))


def _card_ok(c) -> bool:
    return (isinstance(c, dict) and isinstance(c.get("columns", []), list) and isinstance(c.get("settings", {}), dict)
            and all(isinstance(x, list) and len(x) >= 3 for x in c.get("columns", [])))


def _overlap(a: dict, b: dict) -> bool:
    return (a["col"] < b["col"] + b["size_x"] and b["col"] < a["col"] + a["size_x"]
            and a["row"] < b["row"] + b["size_y"] and b["row"] < a["row"] + a["size_y"])


def slugged(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "filter"
