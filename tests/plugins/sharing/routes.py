"""The public, embed and embed-preview routes as the app declares them, and a request that reaches the
`shared_objects` fixture's card, dashboard or action through each: walks read the routes from the app, so
a new route is walked with no edit, and a path parameter a walk cannot fill fails it."""
from __future__ import annotations

import re

PREFIXES = ("/api/public/", "/api/embed/", "/api/preview-embed/")
EMBED_PREFIXES = ("/api/embed/", "/api/preview-embed/")
PARAM = re.compile(r"<(?:[a-z_]+:)?([A-Za-z0-9_]+)>")
# What changes from one answer to the next whoever serves it: when it ran and for how long.
VOLATILE = {"started_at", "running_time", "average_execution_time", "cached", "updated_at"}


def shared_routes(app, prefixes=PREFIXES):
    routes = [e for e in app.extensions["tessera"].endpoints if e.full_rule.startswith(prefixes)]
    return sorted(routes, key=lambda e: (e.full_rule, e.method))


def kind_of(rule: str) -> str:
    """The kind of object a route serves: the first of card/dashboard/action among its segments (oEmbed
    names a card's page)."""
    return next((s for s in rule.split("/") if s in ("card", "dashboard", "action")), "card")


def request_for(endpoint, shared: dict) -> dict:
    """The URL, query string and body that reach the shared objects through `endpoint`."""
    kind = kind_of(endpoint.full_rule)
    values = {"uuid": shared["uuid"][kind], "token": shared["token"].get(kind), "dashboard_id": shared["dashboard"],
              "dashcard_id": shared["dashcard"], "card_id": shared["card"], "field_id": shared["field"],
              "search_field_id": shared["field"], "remapped_id": shared["field"], "param_key": "fn",
              "prefix": "A", "query": "A", "export_format": "csv"}

    def fill(match):
        name = match.group(1)
        assert name in values, f"{endpoint.method} {endpoint.full_rule}: no value for <{name}>: add one to this walk"
        return str(values[name])

    url = PARAM.sub(fill, endpoint.full_rule)
    query_fields = set(endpoint.query.model_fields) if endpoint.query is not None else set()
    args = {"value": "Ada", "limit": 10, "url": f"http://localhost/public/question/{shared['uuid']['card']}"}
    query = {k: v for k, v in args.items() if k in query_fields}
    body = None
    if endpoint.method in ("POST", "PUT"):
        body_fields = set(endpoint.body.model_fields) if endpoint.body is not None else set()
        body = {"token": shared["token"]["dashboard"]} if "token" in body_fields else {}
        if "parameters" in body_fields:
            body["parameters"] = {"age": 36} if kind == "action" else {}
    return {"path": url, "method": endpoint.method, "query_string": query, **({"json": body} if body is not None else {})}


def comparable(response):
    """The answer without what changes on every run (timestamps, durations); bytes for a file."""
    if response.mimetype != "application/json":
        return response.status_code, response.mimetype, response.get_data()
    body = response.json

    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in VOLATILE}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return response.status_code, strip(body)
