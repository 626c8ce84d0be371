"""A native question's parameters as the page's filters (filters.py reads their values from the URL and
templates/app/_filters.html draws them): the card's own `parameters`, as Metabase's editor saves them,
and for a template tag none of them targets, one made from the tag as Metabase's editor would make it.
Also what is the question's own: each parameter's target in a run of the card, and where a field
filter's list of values comes from (POST /api/dataset/parameter/values, or /search/<text>).

Values go to the API as the URL gives them: it reads them as the column's or the tag's type and its
refusal is shown like any failed run, so the page never judges a value itself.
"""
from __future__ import annotations

from urllib.parse import quote

from core.http.internal import Answer, call

from . import filters

# Tag types that are not values a person gives (another card's query, a snippet of SQL).
NOT_WIDGETS = frozenset({"card", "snippet"})
# A plain `date` tag takes one date: the API refuses ranges and relative dates for it (Metabase's
# substitution parses a single date there too), so its widget offers "On a date" alone.
TAG_PARAMETER_TYPES = {"text": "category", "number": "number/=", "date": "date/single"}
VALUES_SOURCE_KEYS = ("values_source_type", "values_source_config")


def _tag_of(target) -> str | None:
    """The template tag a parameter's target names (["variable"|"dimension", ["template-tag", name]])."""
    if isinstance(target, list) and len(target) >= 2 and isinstance(target[1], list) and len(target[1]) >= 2 \
            and target[1][0] == "template-tag" and isinstance(target[1][1], str):
        return target[1][1]
    return None


def field_id(tag: dict | None) -> int | None:
    """The column a field filter tag filters (its ["field", id, ...] dimension)."""
    dimension = (tag or {}).get("dimension")
    if isinstance(dimension, list) and len(dimension) >= 2 and dimension[0] == "field" \
            and type(dimension[1]) is int:
        return dimension[1]
    return None


def _tags(card: dict) -> dict:
    native = (card.get("dataset_query") or {}).get("native") or {}
    tags = native.get("template-tags")
    return tags if isinstance(tags, dict) else {}


def _as_parameter(parameter: dict, tag: dict | None) -> dict:
    """A parameter as the filters take it: its default read as a value from the URL would be (a tag's
    default is saved as text), and no list of values for a variable with neither a column nor a source."""
    out = dict(parameter)
    default = out.get("default")
    if default not in (None, [], ""):
        given = [str(v) for v in (default if isinstance(default, list) else [default]) if v is not None]
        out["default"] = filters.read_value(out, given)
    variable = not isinstance(tag, dict) or tag.get("type") != "dimension"
    if variable and "values_query_type" not in out and not out.get("values_source_type"):
        out["values_query_type"] = "none"
    return out


def parameters(card: dict) -> list[dict]:
    """The card's parameters (each with id, slug, name, type, target, default, required), one for each
    template tag a person gives a value to."""
    tags = _tags(card)
    out: list[dict] = []
    covered: set[str] = set()
    for parameter in card.get("parameters") or []:
        if not isinstance(parameter, dict) or not parameter.get("id") or not parameter.get("type"):
            continue
        tag_name = _tag_of(parameter.get("target"))
        covered.add(tag_name)
        slug = str(parameter.get("slug") or tag_name or parameter["id"])
        out.append(_as_parameter({**parameter, "id": str(parameter["id"]), "slug": slug,
                                  "name": str(parameter.get("name") or slug)}, tags.get(tag_name)))
    out += [_as_parameter(parameter, tags[parameter["slug"]]) for parameter in tag_parameters(tags)
            if parameter["slug"] not in covered]
    return out


def tag_parameters(tags: dict) -> list[dict]:
    """A parameter for each template tag a person gives a value to, as Metabase's SQL editor makes them
    (and saves them with the card)."""
    out = []
    for name, tag in tags.items():
        if not isinstance(tag, dict) or tag.get("type") in NOT_WIDGETS:
            continue
        if tag.get("type") == "dimension":
            parameter_type, target = str(tag.get("widget-type") or "category"), ["dimension", ["template-tag", name]]
        else:
            parameter_type = TAG_PARAMETER_TYPES.get(tag.get("type"), "category")
            target = ["variable", ["template-tag", name]]
        out.append({"id": str(tag.get("id") or name), "slug": name, "type": parameter_type,
                    "name": str(tag.get("display-name") or name), "target": target,
                    "default": tag.get("default"), "required": bool(tag.get("required"))})
    return out


def api_parameters(current: list[filters.Filter]) -> list[dict]:
    """The parameters a run of the card is sent: the filters' values, each with its template tag target."""
    targets = {f.id: f.parameter.get("target") for f in current}
    return [{**p, "target": targets[p["id"]]} for p in filters.api_parameters(current)]


def values(card: dict, parameter: dict, query: str | None) -> Answer:
    """The API's list of a parameter's values for this user ({values, has_more_values}): its field
    filter's column, a static list or another card's column; those holding `query` if given."""
    tag = _tags(card).get(_tag_of(parameter.get("target")) or "")
    column = field_id(tag if isinstance(tag, dict) else None)
    asked = {"id": parameter["id"], "type": parameter["type"],
             **{key: parameter[key] for key in VALUES_SOURCE_KEYS if key in parameter}}
    path = f"/api/dataset/parameter/search/{quote(query, safe='')}" if query else "/api/dataset/parameter/values"
    return call("POST", path, json={"parameter": asked, "field_ids": [column] if column is not None else []})
