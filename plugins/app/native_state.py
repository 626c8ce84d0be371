"""The SQL editor's state (plugins/app/native_editor.py): the database, the SQL text and each template
tag's settings, as the editor's form fields carry them and its URL keeps them, and the Metabase question
they stand for (`dataset_query` of type "native" with its `template-tags`).

Field names hold a "-" ("native-db", "native-sql", "tag-type.<name>"), which no tag name may (the API's
tag names are [A-Za-z0-9_.]), so every other key of the URL is a parameter value by slug, as on a saved
question's page. The tags are the API's own reading of the text (core.query.native.tag_names, the
parser a run uses), never a second parser: `{{var}}`, `{{snippet: name}}`, `{{#N-slug}}`, inside
`[[optional clauses]]` or not.
"""
from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field

import orjson
from werkzeug.datastructures import MultiDict

from core.charts.registry import DISPLAYS
from core.query import native as N
from core.query.errors import QueryFailed

DB, SQL = "native-db", "native-sql"
# The result table's own state (sorting, paging) while the editor is open.
SORT, DIR, PAGE = "native-sort", "native-dir", "native-page"
# How the result is shown and what a save stores with the query: the display, its visualization_settings
# (URL-safe base64 of their JSON), chart or table, and the saved question the editor was opened from
# (a save may replace it). CHANGE carries one change of the visualization panel to the next run.
DISPLAY, VIZ, VIEW, CARD, CHANGE = "native-display", "native-viz", "native-view", "native-card", "native-viz-change"
SETTINGS = ("type", "label", "required", "default", "field", "widget", "id")
VARIABLE_TYPES = (("text", "Text"), ("number", "Number"), ("date", "Date"), ("dimension", "Field filter"))
# A field filter's widget types, as Metabase's template-tag settings offer them.
WIDGET_TYPES = (
    ("category", "Dropdown list"), ("string/=", "Is"), ("string/!=", "Is not"), ("string/contains", "Contains"),
    ("string/does-not-contain", "Does not contain"), ("string/starts-with", "Starts with"),
    ("string/ends-with", "Ends with"), ("number/=", "Equal to"), ("number/!=", "Not equal to"),
    ("number/between", "Between"), ("number/>=", "Greater than or equal to"),
    ("number/<=", "Less than or equal to"), ("id", "ID"), ("date/single", "Single date"),
    ("date/range", "Date range"), ("date/relative", "Relative date"), ("date/month-year", "Month and year"),
    ("date/quarter-year", "Quarter and year"), ("date/all-options", "All options"))
WIDGET_NAMES = frozenset(name for name, _ in WIDGET_TYPES)
CARD_REF = re.compile(r"^#(\d+)")
# A tag's id as Metabase's editor makes them (a UUID) or as this editor does (the tag's name): kept from
# the question the editor opened, so a replaced card's parameters and dashboard mappings still match.
TAG_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


def encode_settings(settings: dict) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(settings)).decode("ascii").rstrip("=")


def decode_settings(text: str | None) -> dict:
    """visualization_settings from the URL's field (nothing for what cannot be read: a view, not data)."""
    raw = (text or "").strip().encode("ascii", "ignore")
    try:
        value = orjson.loads(base64.urlsafe_b64decode(raw + b"=" * (-len(raw) % 4))) if raw else {}
    except (binascii.Error, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def key(setting: str, name: str) -> str:
    return f"tag-{setting}.{name}"


def display_name(name: str) -> str:
    """A tag's name as Metabase's editor first names its widget ("min_amount" -> "Min Amount")."""
    return " ".join(word.capitalize() for word in re.split(r"[_.\s]+", name) if word) or name


@dataclass
class Editor:
    """What the editor holds: the database, the SQL, the template tags (Metabase's shape) and, when
    the text cannot be read (an unclosed `{{`), the parser's message."""

    database: int | None
    sql: str
    tags: dict = field(default_factory=dict)
    problem: str | None = None
    display: str = "table"
    settings: dict = field(default_factory=dict)
    view: str | None = None
    card: int | None = None

    def dataset_query(self) -> dict:
        return {"database": self.database, "type": "native",
                "native": {"query": self.sql, "template-tags": self.tags}}

    def question(self) -> dict:
        """The question a save stores (and the ad-hoc link's shape: question_query.decode_adhoc)."""
        out = {"dataset_query": self.dataset_query(), "display": self.display,
               "visualization_settings": self.settings}
        return {**out, "original_card_id": self.card} if self.card is not None else out

    def view_fields(self) -> list[tuple[str, str]]:
        pairs = [(DISPLAY, self.display)] if self.display != "table" else []
        if self.settings:
            pairs.append((VIZ, encode_settings(self.settings)))
        if self.view:
            pairs.append((VIEW, self.view))
        if self.card is not None:
            pairs.append((CARD, str(self.card)))
        return pairs

    def fields(self) -> list[tuple[str, str]]:
        """The editor's form fields for this state (what its URL keeps)."""
        pairs = [(DB, str(self.database))] if self.database is not None else []
        pairs.append((SQL, self.sql))
        pairs.extend(self.view_fields())
        for name, tag in self.tags.items():
            if tag["type"] in ("snippet", "card"):
                continue
            pairs.append((key("type", name), tag["type"]))
            if tag.get("id") != name:
                pairs.append((key("id", name), str(tag["id"])))
            if tag.get("display-name") != display_name(name):
                pairs.append((key("label", name), tag.get("display-name") or ""))
            if tag.get("required"):
                pairs.append((key("required", name), "true"))
            if tag.get("default") not in (None, ""):
                pairs.append((key("default", name), str(tag["default"])))
            if tag["type"] == "dimension":
                dimension = tag.get("dimension") or [None, None]
                if dimension[1] is not None:
                    pairs.append((key("field", name), str(dimension[1])))
                pairs.append((key("widget", name), tag.get("widget-type") or "category"))
        return pairs


def _id(text: str | None) -> int | None:
    text = (text or "").strip()
    return int(text) if text.isdigit() and len(text) < 16 else None


def from_fields(args: MultiDict, snippets: dict[str, int]) -> Editor:
    """The editor's state from its form fields; `snippets` are the user's snippets' ids by name."""
    sql = args.get(SQL) or ""
    display = (args.get(DISPLAY) or "").strip()
    editor = Editor(_id(args.get(DB)), sql, display=display if display in DISPLAYS else "table",
                    settings=decode_settings(args.get(VIZ)), card=_id(args.get(CARD)),
                    view=args.get(VIEW) if args.get(VIEW) in ("chart", "table") else None)
    try:
        names = N.tag_names(sql)
    except QueryFailed as exc:
        editor.problem = str(exc)
        return editor
    for name in names:
        editor.tags[name] = _tag(name, args, snippets)
    return editor


def _tag(name: str, args: MultiDict, snippets: dict[str, int]) -> dict:
    if name.startswith("snippet:"):
        snippet = name.split(":", 1)[1].strip()
        return {"id": name, "name": name, "display-name": snippet, "type": "snippet", "snippet-name": snippet,
                "snippet-id": snippets.get(snippet)}
    if name.startswith("#"):
        match = CARD_REF.match(name)
        return {"id": name, "name": name, "display-name": name, "type": "card",
                "card-id": int(match.group(1)) if match else None}
    kind = args.get(key("type", name)) or "text"
    if kind not in {value for value, _ in VARIABLE_TYPES}:
        kind = "text"
    label = args.get(key("label", name))
    given = (args.get(key("id", name)) or "").strip()
    tag = {"id": given if TAG_ID.fullmatch(given) else name, "name": name, "display-name": label.strip() if label and label.strip() else display_name(name),
           "type": kind, "required": args.get(key("required", name)) in ("true", "on")}
    default = (args.get(key("default", name)) or "").strip()
    if default:
        tag["default"] = default
    if kind == "dimension":
        tag["dimension"] = ["field", _id(args.get(key("field", name))), None]
        widget = args.get(key("widget", name)) or "category"
        tag["widget-type"] = widget if widget in WIDGET_NAMES else "category"
    return tag


def from_question(dataset_query: dict) -> MultiDict:
    """The editor's fields for a native dataset_query (a link's, or a saved question's): its text,
    database and each variable's settings."""
    native = dataset_query.get("native") if isinstance(dataset_query.get("native"), dict) else {}
    stages = dataset_query.get("stages")
    if isinstance(stages, list) and stages and isinstance(stages[0], dict):  # MBQL 5: the native stage
        native = {"query": stages[0].get("native"), "template-tags": stages[0].get("template-tags")}
    sql = native.get("query") if isinstance(native.get("query"), str) else ""
    database = dataset_query.get("database")
    pairs = [(SQL, sql)]
    if type(database) is int:
        pairs.append((DB, str(database)))
    tags = native.get("template-tags") if isinstance(native.get("template-tags"), dict) else {}
    for name, tag in tags.items():
        if not isinstance(tag, dict) or tag.get("type") in ("snippet", "card"):
            continue
        pairs.append((key("type", name), str(tag.get("type") or "text")))
        if isinstance(tag.get("id"), str) and tag["id"] != name:
            pairs.append((key("id", name), tag["id"]))
        if tag.get("display-name"):
            pairs.append((key("label", name), str(tag["display-name"])))
        if tag.get("required"):
            pairs.append((key("required", name), "true"))
        default = tag.get("default")
        if default not in (None, "", []):
            pairs.append((key("default", name), str(default[0] if isinstance(default, list) else default)))
        dimension = tag.get("dimension")
        if isinstance(dimension, list) and len(dimension) >= 2 and type(dimension[1]) is int:
            pairs.append((key("field", name), str(dimension[1])))
        if tag.get("widget-type"):
            pairs.append((key("widget", name), str(tag["widget-type"])))
    return MultiDict(pairs)


def is_state_key(name: str) -> bool:
    """Whether a URL key is the editor's own (every other one is a parameter value by slug)."""
    return "-" in name
