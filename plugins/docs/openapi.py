"""The OpenAPI 3.1 document, generated from the endpoint declarations (never written by hand)."""
from __future__ import annotations

import re

from pydantic import BaseModel

from core import __version__
from core.http.api import Endpoint

PATH_PARAM = re.compile(r"<(?:[a-z_]+:)?([A-Za-z0-9_-]+)>")
REF = "#/components/schemas/{model}"


def openapi_path(rule: str) -> str:
    return PATH_PARAM.sub(r"{\1}", rule) or "/"


def _schema(model: type[BaseModel], components: dict) -> dict:
    schema = model.model_json_schema(ref_template=REF, by_alias=True)
    for name, definition in schema.pop("$defs", {}).items():
        components[name] = definition
    return schema


def _parameters(model: type[BaseModel] | None, where: str, components: dict, rule: str = "") -> list[dict]:
    if model is None:
        return []
    schema = _schema(model, components)
    required = set(schema.get("required", ()))
    return [
        {"name": _path_name(model, name, rule) if where == "path" else name, "in": where,
         "required": where == "path" or name in required, "schema": prop}
        for name, prop in schema.get("properties", {}).items()
    ]


def _path_name(model: type[BaseModel], alias: str, rule: str) -> str:
    """A path parameter as the rule's template names it. A field may carry an alias for Metabase's error
    texts ("entity-id-or-query"), while a rule variable is a Python name ("entity_id_or_query"): the
    document must use the template's name, or the parameter names nothing a client can fill."""
    variables = set(PATH_PARAM.findall(rule))
    if alias in variables:
        return alias
    return next((name for name, info in model.model_fields.items() if info.alias == alias and name in variables),
                alias)


def document(endpoints: list[Endpoint], title: str = "Tessera") -> dict:
    paths: dict[str, dict] = {}
    components: dict[str, dict] = {}
    for ep in sorted(endpoints, key=lambda e: (e.full_rule, e.method)):
        operation: dict = {
            "operationId": f"{ep.blueprint.name}.{ep.view.__name__}.{ep.method.lower()}",
            "summary": ep.summary,
            "tags": [ep.blueprint.name],
            "parameters": _parameters(ep.path, "path", components, ep.full_rule)
            + _parameters(ep.query, "query", components),
            "responses": {str(ep.status): {"description": "Success"}},
        }
        if ep.auth != "public":
            operation["security"] = [{"session": []}, {"apiKey": []}]
            operation["responses"]["401"] = {"description": "Unauthenticated"}
        if ep.auth == "superuser":
            operation["responses"]["403"] = {"description": "Superuser only"}
        if ep.body is not None:
            operation["requestBody"] = {"content": {"application/json": {"schema": _schema(ep.body, components)}}}
        if ep.path or ep.query or ep.body:
            operation["responses"]["400"] = {"description": "Invalid parameters"}
        paths.setdefault(openapi_path(ep.full_rule), {})[ep.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": title, "version": __version__},
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                "session": {"type": "apiKey", "in": "header", "name": "X-Metabase-Session"},
                "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-KEY"},
            },
        },
    }
