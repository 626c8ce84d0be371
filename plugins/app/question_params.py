"""A native question's parameter widgets and their values in the page's URL (?region=North&min=10):
which widget each parameter gets (text, number, date, month, a range of two, a field filter's values
offered as suggestions) and the parameters a run of the card is sent.

The parameters are the card's own (`parameters`, as Metabase's editor saves them) and, for a template
tag none of them targets, one made from the tag as Metabase's editor would make it. Values go to the
API as text: it reads them as the column's or the tag's type and its refusal is shown like any failed
run, so the page never judges a value itself.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from core.http.internal import call

# Tag types that are not values a person gives (another card's query, a snippet of SQL).
NOT_WIDGETS = frozenset({"card", "snippet"})
TAG_PARAMETER_TYPES = {"text": "category", "number": "number/=", "date": "date/single"}
DATE_HINT = "A date (2024-01-31), a range (2024-01-01~2024-03-31) or a relative one (past30days, thismonth)"
# Widget types whose values are words or ids a person picks from the field's values.
SUGGESTED = ("category", "id", "string/=", "string/!=", "location/")


@dataclass
class Widget:
    """One parameter's input: `kind` is text, number, date, month, date-range, number-range or date-text."""

    id: str
    slug: str
    label: str
    type: str
    target: list
    kind: str
    values: list[str] = field(default_factory=list)  # from the URL
    default: object = None
    required: bool = False
    field_id: int | None = None
    parameter: dict = field(default_factory=dict)
    suggestions: list[str] = field(default_factory=list)

    @property
    def shown(self) -> list[str]:
        """The values the inputs show: the URL's, else the default the API applies."""
        if self.values:
            return self.values
        if self.default is None:
            return []
        return [str(v) for v in self.default] if isinstance(self.default, list) else [str(self.default)]

    @property
    def hint(self) -> str | None:
        return DATE_HINT if self.kind == "date-text" else None


def _kind(parameter_type: str) -> str:
    if parameter_type == "date/single":
        return "date"
    if parameter_type == "date/month-year":
        return "month"
    if parameter_type == "date/range":
        return "date-range"
    if parameter_type.startswith("date/"):
        return "date-text"
    if parameter_type == "number/between":
        return "number-range"
    if parameter_type.startswith("number"):
        return "number"
    return "text"


def _tag_of(target) -> str | None:
    """The template tag a parameter's target names (["variable"|"dimension", ["template-tag", name]])."""
    if isinstance(target, list) and len(target) >= 2 and isinstance(target[1], list) and len(target[1]) >= 2 \
            and target[1][0] == "template-tag" and isinstance(target[1][1], str):
        return target[1][1]
    return None


def _field_id(tag: dict | None) -> int | None:
    dimension = (tag or {}).get("dimension")
    if isinstance(dimension, list) and len(dimension) >= 2 and dimension[0] == "field" and isinstance(dimension[1], int):
        return dimension[1]
    return None


def widgets(card: dict, args) -> list[Widget]:
    """The widgets of a card's parameters, with the values `args` (the request's query string) gives."""
    native = (card.get("dataset_query") or {}).get("native") or {}
    tags = native.get("template-tags") if isinstance(native.get("template-tags"), dict) else {}
    out: list[Widget] = []
    covered: set[str] = set()
    for parameter in card.get("parameters") or []:
        if not isinstance(parameter, dict) or not parameter.get("id") or not parameter.get("type"):
            continue
        tag_name = _tag_of(parameter.get("target"))
        covered.add(tag_name)
        tag = tags.get(tag_name) if tag_name else None
        slug = str(parameter.get("slug") or tag_name or parameter["id"])
        out.append(Widget(str(parameter["id"]), slug, str(parameter.get("name") or slug), str(parameter["type"]),
                          parameter.get("target"), _kind(str(parameter["type"])), _given(args, slug),
                          parameter.get("default"), bool(parameter.get("required")), _field_id(tag), parameter))
    for name, tag in tags.items():
        if name in covered or not isinstance(tag, dict) or tag.get("type") in NOT_WIDGETS:
            continue
        if tag.get("type") == "dimension":
            parameter_type, target = str(tag.get("widget-type") or "category"), ["dimension", ["template-tag", name]]
        else:
            parameter_type = TAG_PARAMETER_TYPES.get(tag.get("type"), "category")
            target = ["variable", ["template-tag", name]]
        out.append(Widget(str(tag.get("id") or name), name, str(tag.get("display-name") or name), parameter_type,
                          target, _kind(parameter_type), _given(args, name), tag.get("default"),
                          bool(tag.get("required")), _field_id(tag)))
    return out


def _given(args, slug: str) -> list[str]:
    return [value.strip() for value in args.getlist(slug) if value.strip()]


def api_parameters(shown: list[Widget]) -> list[dict]:
    """The parameters a run is sent: each widget the URL gives a value, as the API takes it."""
    out = []
    for widget in shown:
        values = widget.values
        if not values:
            continue
        if widget.kind == "date-range":
            value: object = "~".join(values[:2]) if len(values) >= 2 else values[0]
        elif widget.kind == "number-range":
            value = values[:2]
        else:
            value = values if len(values) > 1 else values[0]
        out.append({"id": widget.id, "type": widget.type, "target": widget.target, "value": value})
    return out


def suggest(shown: list[Widget]) -> None:
    """Fill each field filter's (and listed parameter's) suggestions with the values the API offers
    this user: its field's values, a static list or another card's column."""
    for widget in shown:
        listed = widget.parameter.get("values_source_type") in ("static-list", "card")
        if widget.kind != "text" or not (listed or (widget.field_id is not None and
                                                    widget.type.startswith(SUGGESTED))):
            continue
        parameter = {"id": widget.id, "type": widget.type, **{
            key: widget.parameter[key] for key in ("values_source_type", "values_source_config") if key in widget.parameter}}
        answer = call("POST", "/api/dataset/parameter/values", json={
            "parameter": parameter, "field_ids": [widget.field_id] if widget.field_id is not None else []})
        if answer.ok and isinstance(answer.body, dict):
            widget.suggestions = [str(row[0]) for row in answer.body.get("values") or []
                                  if isinstance(row, list) and row and row[0] is not None]
