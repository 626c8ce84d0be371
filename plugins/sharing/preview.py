"""Embedding preview requests that post their values: downloads (csv, json, xlsx, and the chart as pdf or
png) and the POST pivot runs. The values come in the body, as a slug -> value object, its JSON text (a
browser's form post) or a list of {slug | id, value}; they then pass the same rules as any embed value
(plugins.sharing.embedding)."""
from __future__ import annotations

from typing import Any

from flask import Response

from core.http import jsontext
from core.http.errors import Invalid

from . import embed_params, embedding


def body_params(parameters: Any) -> tuple[dict, dict]:
    """Parameter values a preview download posts, as (by slug, by parameter id): a slug -> value object,
    its JSON text (a form field), or a list of {slug | id, value}."""
    if parameters is None or parameters == "":
        return {}, {}
    if isinstance(parameters, str):
        try:
            parameters = jsontext.loads(parameters)
        except jsontext.JsonTextError:
            raise Invalid({"parameters": "value must be a valid JSON string."}) from None
    if isinstance(parameters, dict):
        return embed_params.normalize(parameters), {}
    if isinstance(parameters, list) and all(isinstance(p, dict) and ("slug" in p or "id" in p) for p in parameters):
        by_slug = {str(p["slug"]): p.get("value") for p in parameters if "slug" in p}
        by_id = {str(p["id"]): p.get("value") for p in parameters if "slug" not in p}
        return embed_params.normalize(by_slug), embed_params.normalize(by_id)
    raise Invalid({"parameters": "value must be a map of parameter slugs to values, or a list of parameters."})


def _posted_values(session, embed: embedding.Embed, parameters: Any) -> dict:
    """The posted values keyed by slug (a parameter given by id is looked up; an unknown id is a 400)."""
    by_slug, by_id = body_params(parameters)
    if by_id:
        id_to_slug = {str(p.get("id")): str(p.get("slug")) for p in embedding.object_parameters(session, embed)}
        for key, value in by_id.items():
            if key not in id_to_slug:
                raise Invalid(f"Invalid parameters: no parameter with ID {embedding.quoted(key)}")
            by_slug[id_to_slug[key]] = value
    return by_slug


def export(session, ref: embedding.Ref, parameters: Any, export_format: str, options: dict, *,
           dashboard_id: int | None = None, **where) -> Response:
    """A preview download; for a dashboard's card, the token must name `dashboard_id` (the path's)."""
    embed = embedding.open_ref(session, ref)
    if dashboard_id is not None and embed.obj.id != dashboard_id:
        raise Invalid(f"The token is for dashboard {embed.obj.id}, not dashboard {dashboard_id}.")
    values = _posted_values(session, embed, parameters)
    query = embedding.shared_query(session, embed, values, options=options, **where)
    return embedding.slot(embed, "export")(session, embed.obj, query, export_format)


def run_posted(session, ref: embedding.Ref, parameters: Any, url_values: dict, **where) -> Response:
    """run, for a POST whose body may carry the parameters (else the query string's are used)."""
    if parameters is None:
        return embedding.run(session, ref, url_values, **where)
    embed = embedding.open_ref(session, ref)
    query = embedding.shared_query(session, embed, _posted_values(session, embed, parameters), **where)
    body, status = embedding.slot(embed, "run")(session, embed.obj, query)
    return Response(body, status=status, mimetype="application/json")
