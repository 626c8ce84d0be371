"""The filters of a page (a dashboard, an x-ray, a native question's parameters): the values its URL
carries (`?city=Oslo&city=Rome&date=past30days`, one key per parameter slug, repeated for a list, as
Metabase's pages write them), the parameters the API is sent for them, and what each widget shows
(templates/app/_filters.html draws them).

Dates keep Metabase's date parameter syntax end to end ("past30days", "thismonth", "2024-01-01",
"2024-01-01~2024-03-31", "~2024-01-01", "2024-03", "Q1-2024"): the URL holds it, the API parses it,
and `date_parts` only splits it so the widget can show it.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from werkzeug.datastructures import MultiDict

UNITS = ("minute", "hour", "day", "week", "month", "quarter", "year")
_UNIT = "(minute|hour|day|week|month|quarter|year)s?"
_RELATIVE = re.compile(rf"^(past|next)(\d+){_UNIT}(~)?$")
_THIS = re.compile(rf"^this{_UNIT}$")
_DAY = r"\d{4}-\d{2}-\d{2}"
_ON = re.compile(rf"^({_DAY})$")
_BETWEEN = re.compile(rf"^({_DAY})?~({_DAY})?$")
_MONTH = re.compile(r"^(\d{4}-\d{2})$")
_QUARTER = re.compile(r"^Q([1-4])-(\d{4})$")

# The ways a date can be given, by parameter type (Metabase's date widgets): the first is the default.
DATE_MODES = {
    "date/single": ("on",),
    "date/range": ("between",),
    "date/relative": ("past", "next", "this"),
    "date/month-year": ("month",),
    "date/quarter-year": ("quarter",),
    "date/all-options": ("past", "next", "this", "on", "between", "before", "after", "month", "quarter"),
}
MODE_LABELS = {"past": "In the past", "next": "In the next", "this": "This (day, week, month…)", "on": "On a date",
               "between": "Between two dates", "before": "Before a date", "after": "After a date",
               "month": "A month", "quarter": "A quarter"}
# Filters that keep one value (a date in Metabase's syntax, a time grouping) rather than a list.
_SINGLE = ("date/", "temporal-unit")


def kind(parameter: dict) -> str:
    """The widget a parameter is drawn as: "date", "unit", "number", "id", "text" (a box to type in, for a
    parameter whose values are not listed: values_query_type "none") or "choice" (a list of values)."""
    ptype = str(parameter.get("type") or "category")
    if ptype.startswith("date"):
        return "date"
    if ptype == "temporal-unit":
        return "unit"
    if ptype.startswith("number/"):
        return "number"
    if ptype == "id":
        return "id"
    if parameter.get("values_query_type") == "none":
        return "text"
    return "choice"


@dataclass(frozen=True)
class Filter:
    """One dashboard parameter on the page: what the URL gave (`given`, strings) and the value sent to the API."""

    parameter: dict
    given: tuple[str, ...]
    value: Any

    @property
    def id(self) -> str:
        return str(self.parameter.get("id"))

    @property
    def slug(self) -> str:
        return str(self.parameter.get("slug") or self.parameter.get("id"))

    @property
    def name(self) -> str:
        return str(self.parameter.get("name") or self.slug)

    @property
    def kind(self) -> str:
        return kind(self.parameter)

    @property
    def type(self) -> str:
        return str(self.parameter.get("type") or "category")

    @property
    def required(self) -> bool:
        return bool(self.parameter.get("required"))

    @property
    def has_default(self) -> bool:
        return self.parameter.get("default") not in (None, [], "")


def _number(text: str) -> int | float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    return int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value


def _number_or_text(text: str) -> int | float | str:
    """A number, or the text itself when it is none: the API reads it and its refusal is what is shown."""
    number = _number(text)
    return text if number is None else number


def _split(given: list[str]) -> list[str]:
    """Numbers and ids may come as repeated keys or one comma-separated field."""
    return [part.strip() for text in given for part in text.split(",") if part.strip()]


def read_value(parameter: dict, given: list[str]) -> Any:
    """The API value of what the URL gave for a parameter (None when it gives nothing usable)."""
    ptype = str(parameter.get("type") or "category")
    texts = [g.strip() for g in given if g.strip()]
    if not texts:
        return None
    if ptype.startswith(_SINGLE):
        return texts[0]
    widget = kind(parameter)
    if widget == "number":
        if ptype == "number/between":
            # Two fields ("from", "to"), either may be empty; or one "low,high" text.
            ends = given if len(given) >= 2 else given[0].split(",")
            low, high = ([_number_or_text(e.strip()) if e.strip() else None for e in ends] + [None, None])[:2]
            return None if low is None and high is None else [low, high]
        numbers = [_number_or_text(t) for t in _split(texts)]
        return numbers[:1] if ptype in ("number/>=", "number/<=") else numbers
    if widget == "id":
        return [int(t) if t.isdigit() and len(t) < 19 else t for t in _split(texts)]
    return texts


def from_url(parameters: list[dict], args: MultiDict) -> list[Filter]:
    """Each parameter's filter from the URL; a parameter the URL leaves out keeps its default (an empty
    `?slug=` clears it)."""
    filters = []
    for parameter in parameters:
        if not isinstance(parameter, dict) or not parameter.get("id"):
            continue
        slug = str(parameter.get("slug") or parameter.get("id"))
        if slug in args:
            given = tuple(args.getlist(slug))
            value = read_value(parameter, list(given))
        else:
            default = parameter.get("default")
            value = default if default not in (None, [], "") else None
            given = tuple(str(v) for v in (default if isinstance(default, list) else [default])) if value is not None else ()
        filters.append(Filter(parameter, given, value))
    return filters


def api_parameters(filters: list[Filter]) -> list[dict]:
    """The `parameters` the API's card queries take: id, type and value of each filter that has one, and
    a null value for a filter whose default the URL cleared (the API applies a default not sent)."""
    return [{"id": f.id, "type": f.type, "value": f.value} for f in filters if f.value is not None or f.has_default]


def query_pairs(filters: list[Filter]) -> list[tuple[str, str]]:
    """The URL's filter part: each value under its slug (lists repeated), an emptied default as `slug=`."""
    pairs = []
    for f in filters:
        if f.value is None:
            if f.has_default:
                pairs.append((f.slug, ""))
            continue
        for value in f.value if isinstance(f.value, list) else [f.value]:
            pairs.append((f.slug, "" if value is None else str(value)))
    return pairs


def query_string(filters: list[Filter], **extra) -> str:
    pairs = query_pairs(filters) + [(key, str(value)) for key, value in extra.items() if value not in (None, "")]
    return urlencode(pairs)


# A value list shows at most this many values; typing narrows it (the API's search).
SHOWN_VALUES = 100


def chosen_values(f: Filter) -> list[str]:
    return [str(v) for v in f.value] if isinstance(f.value, list) else []


def choices(f: Filter, listed: dict, query: str) -> tuple[list[tuple[str, str]], bool]:
    """A value list's offer besides the values chosen: (value, label) pairs of the API's answer
    ({values: [[value], [value, label]...], has_more_values}), and whether there are more than shown.
    When a search finds nothing, the text typed is offered itself (a value no list holds can be chosen)."""
    chosen = set(chosen_values(f))
    offered = []
    for entry in listed.get("values") or []:
        value = entry[0] if isinstance(entry, list) and entry else entry
        label = entry[1] if isinstance(entry, list) and len(entry) > 1 and entry[1] is not None else value
        if value is not None and str(value) not in chosen:
            offered.append((str(value), str(label)))
    if query and not offered and query not in chosen:
        offered.append((query, f"“{query}”"))
    return offered[:SHOWN_VALUES], len(offered) > SHOWN_VALUES or bool(listed.get("has_more_values"))


def offer(f: Filter, answer, query: str) -> dict:
    """A value list's fragment (templates/app/_filter_values.html) from the API's answer listing its values."""
    listed = answer.body if answer.ok and isinstance(answer.body, dict) else {}
    offered, more = choices(f, listed, query)
    return {"f": f, "chosen": chosen_values(f), "offered": offered, "more": more,
            "failed": None if answer.ok else (answer.message or "The values could not be listed.")}


def widget_context() -> dict:
    """What the widget macro (templates/app/_filters.html) is given besides the filter."""
    return {"date_modes": DATE_MODES, "mode_labels": MODE_LABELS, "units": UNITS, "date_parts": date_parts}


def date_parts(value: Any) -> dict:
    """A date value split for its widget: the mode and the fields that mode shows (nothing for none)."""
    text = str(value or "").strip()
    if not text:
        return {"mode": ""}
    if match := _RELATIVE.match(text):
        return {"mode": match.group(1), "amount": int(match.group(2)), "unit": match.group(3),
                "current": bool(match.group(4))}
    if match := _THIS.match(text):
        return {"mode": "this", "unit": match.group(1)}
    if text in ("today", "yesterday"):
        return {"mode": "this", "unit": "day"} if text == "today" else {"mode": "past", "amount": 1, "unit": "day"}
    if match := _ON.match(text):
        return {"mode": "on", "start": match.group(1)}
    if match := _BETWEEN.match(text):
        start, end = match.groups()
        if start and end:
            return {"mode": "between", "start": start, "end": end}
        if end:
            return {"mode": "before", "end": end}
        if start:
            return {"mode": "after", "start": start}
    if match := _MONTH.match(text):
        return {"mode": "month", "month": match.group(1)}
    if match := _QUARTER.match(text):
        return {"mode": "quarter", "quarter": int(match.group(1)), "year": int(match.group(2))}
    return {"mode": "other", "text": text}  # a form this widget does not draw (an exclusion): kept as typed


def constraints(filters: list[Filter], other_than: str) -> dict[str, list[str]]:
    """The other filters' values by parameter id: what chains a filter's list of values."""
    out = {}
    for f in filters:
        if f.id == other_than or f.value is None:
            continue
        out[f.id] = [str(v) for v in (f.value if isinstance(f.value, list) else [f.value]) if v is not None]
    return out
