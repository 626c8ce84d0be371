"""The embedding-parameter rules: which parameter values a signed token and the embed URL may set.

An embeddable card or dashboard keeps `embedding_params`, a map slug -> "enabled" | "locked" | "disabled"
(the preview reads the same map from the token's `_embedding_params`). The rules and their messages are
Metabase's (compat/content.md section 5, embedding/api/common.clj):
- disabled: a value from neither the token nor the URL;
- enabled: from the token or the URL, not both;
- locked: the token must give it and the URL must not;
- a slug the map does not list cannot be given at all.
The merged values have the token's value win. The object's GET response hides the parameters a viewer
cannot set: locked, disabled, unlisted, or already set by the token.

URL values come as `slug=value` query parameters (repeated for a list) or, since Metabase 51, as one
`parameters=<json object>`, which distinguishes numbers and booleans from text.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from core.http import jsontext
from core.http.errors import Invalid

STATUSES = ("enabled", "locked", "disabled")
# Query-string keys that are options of the request, never parameter values.
OPTION_KEYS = frozenset({"format_rows", "pivot_results", "parameters"})


def check_embedding_params(value: Any) -> dict[str, str]:
    """A stored or token-carried embedding-params map, checked: slug -> one of STATUSES. None is {}."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and v in STATUSES for k, v in value.items()):
        raise Invalid("Embedding parameters must map each parameter slug to \"enabled\", \"locked\" or \"disabled\".")
    return value


def user_params(args: Iterable[tuple[str, list[str]]], parameters_json: str | None) -> dict[str, Any]:
    """The parameter values the embed URL gives: `parameters=<json object>` when it is present and
    parses to an object (Metabase falls back to the plain keys otherwise), else `slug=value` pairs, a
    repeated slug giving a list. `args` are (key, [values]) pairs of the query string."""
    if parameters_json is not None:
        try:
            parsed = jsontext.loads(parameters_json)
        except jsontext.JsonTextError:
            parsed = None
        if isinstance(parsed, dict):
            return normalize(parsed)
    params: dict[str, Any] = {}
    for key, values in args:
        if key in OPTION_KEYS or not values:
            continue
        params[key] = values[0] if len(values) == 1 else list(values)
    return normalize(params)


def normalize(params: Mapping[str, Any]) -> dict[str, Any]:
    """An empty string means no value (None), as Metabase reads `?slug=`."""
    return {str(k): (None if v == "" else v) for k, v in params.items()}


def _given(value: Any) -> bool:
    """Metabase's valid-param-value?: a blank string is not a value; anything else (null included) is."""
    return not (isinstance(value, str) and not value.strip())


def validate_and_merge(embedding_params: Mapping[str, str] | None, token_params: Mapping[str, Any],
                       url_params: Mapping[str, Any]) -> dict[str, Any]:
    """Check the token's and the URL's values against the object's rules (400 with Metabase's message at
    the first broken rule) and return them merged, the token's winning, empty lists made None."""
    rules = check_embedding_params(embedding_params)
    token = {k: v for k, v in token_params.items() if _given(v)}
    url = {k: v for k, v in url_params.items() if _given(v)}
    for slug, status in rules.items():
        if status == "disabled" and (slug in token or slug in url):
            raise Invalid(f"You're not allowed to specify a value for {slug}.")
        if status == "enabled" and slug in token and slug in url:
            raise Invalid(f"You can't specify a value for {slug} if it's already set in the JWT.")
        if status == "locked":
            if token.get(slug) is None:
                raise Invalid(f"You must specify a value for {slug} in the JWT.")
            if slug in url:
                raise Invalid(f"You can only specify a value for {slug} in the JWT.")
    for slug in {**token, **url}:
        if slug not in rules:
            raise Invalid(f"Unknown parameter {slug}.")
    merged = {**dict(url_params), **dict(token_params)}
    return {k: (None if isinstance(v, (list, tuple)) and not v else v) for k, v in merged.items()}


def hidden_slugs(parameters: Iterable[Mapping[str, Any]], embedding_params: Mapping[str, str] | None,
                 token_params: Mapping[str, Any]) -> frozenset[str]:
    """The slugs of `parameters` a viewer of the embed must not see a widget for: not listed as enabled
    (locked, disabled or unlisted), or already set by the token."""
    rules = check_embedding_params(embedding_params)
    return frozenset(str(p.get("slug")) for p in parameters
                     if rules.get(str(p.get("slug"))) != "enabled" or str(p.get("slug")) in token_params)


def slug_values_to_parameters(parameters: Iterable[Mapping[str, Any]], values: Mapping[str, Any], *,
                              strict: bool = True) -> tuple:
    """Metabase parameter objects for the merged slug -> value map, matched to the object's own
    parameters by slug: {id, slug, type, target?, value}; a None value sets nothing. A slug the object
    does not have is a 400 when `strict` (a dashboard: the rules may list a slug it has since lost), else
    passed on as {slug, value} for the owner to match (a card's template tags are parameters too)."""
    by_slug = {str(p.get("slug")): p for p in parameters if p.get("slug")}
    out = []
    for slug, value in values.items():
        param = by_slug.get(slug)
        if param is None and strict:
            raise Invalid(f"No matching parameter with slug {slug!r}. Found: {sorted(by_slug)!r}")
        if value is None:
            continue
        if param is None:
            out.append({"slug": slug, "value": value})
            continue
        item = {"id": param.get("id"), "slug": slug, "type": param.get("type"), "value": value}
        if param.get("target") is not None:
            item["target"] = param["target"]
        out.append(item)
    return tuple(out)
