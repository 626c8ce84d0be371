"""HTTP actions: a request template `{method, url, body, headers}` filled with the parameters and sent
through the guarded outbound client (core.outbound.http.fetch: resolved once, private and metadata
addresses refused unless allowed by `http-actions-allowed-cidrs`, redirects checked, bodies capped).

The template language is the native query's (core.query.native.parse): `{{name}}` is the value of the
parameter with that id and `[[ ... ]]` is dropped when a parameter inside it has no value; a missing
required one is Metabase's 400. Where a value lands decides how it is written (compat/security.md
row 11): in the URL percent-encoded (so it cannot add a path segment, a query key or a host), in the
headers JSON-escaped (so it cannot end its string and add a header), in the body as Metabase writes it.
The URL's scheme and host are fixed when the action is saved (`check_template`). The header
`X-Metabase-Action: <action name>` is added and the request asks for JSON.

The response is reduced to `{body, headers, status}`; `error_handle` (jq, default `.status >= 400`)
truthy -> 400 with its result (`{"remote-status": status}` for a plain boolean); else `response_handle`
-> 200 with its result; else 204.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlsplit

import orjson
from flask import Response

from core.http import jsontext
from core.http.api import json_response
from core.http.auth import tessera
from core.http.errors import Invalid
from core.outbound import http as outbound
from core.query import native as N
from core.query.errors import QueryFailed

from . import jq_handles

DEFAULT_ERROR_HANDLE = ".status >= 400"


class _Missing(Exception):
    pass


def _text(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def _encode(where: str, value: Any) -> str:
    text = _text(value)
    if where == "url":
        return quote(text, safe="")
    if where == "headers":
        return orjson.dumps(text).decode()[1:-1]
    return text


def substitute(template: str | None, values: dict, where: str) -> str | None:
    """The template with its parameters written in; Invalid naming the missing required ones."""
    if template is None:
        return None
    try:
        nodes = N.parse(template)
    except QueryFailed as exc:
        raise Invalid(f"Problem building request: {exc.message}") from None
    missing: list[str] = []
    out = _emit(nodes, values, where, missing, optional=False)
    if missing:
        names = " ".join(f'"{m}"' for m in sorted(set(missing)))
        raise Invalid(f"Cannot call the service: missing required parameters: #{{{names}}}")
    return out.strip()


def _emit(nodes: list, values: dict, where: str, missing: list, *, optional: bool) -> str:
    out = []
    for node in nodes:
        if isinstance(node, N.Text):
            out.append(node.text)
        elif isinstance(node, N.Optional):
            try:
                out.append(_emit(node.children, values, where, missing, optional=True))
            except _Missing:
                continue
        elif values.get(node.name) is None:
            if optional:
                raise _Missing()
            missing.append(node.name)
        else:
            out.append(_encode(where, values[node.name]))
    return "".join(out)


def check_template(template: dict) -> None:
    """At save: an http(s) URL whose scheme and host are written out, never filled by a parameter."""
    url = str(template.get("url") or "")
    head, sep, rest = url.partition("://")
    authority = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    if not sep or head.lower() not in ("http", "https") or not authority or any(
            token in head + authority for token in ("{{", "}}", "[[", "]]")):
        raise Invalid({"template": "The URL must start with http:// or https:// and a fixed host; "
                                   "parameters may fill only its path and query."})
    try:
        urlsplit(url.replace("{{", "").replace("}}", ""))
    except ValueError:
        raise Invalid({"template": "The URL is not valid."}) from None


def _headers(text: str | None, action_name: str) -> dict[str, str]:
    headers: dict[str, str] = {}
    if text:
        try:
            decoded = jsontext.loads(text)
        except Invalid:
            raise Invalid("Problem building request: the headers are not a JSON object.") from None
        if not isinstance(decoded, dict):
            raise Invalid("Problem building request: the headers are not a JSON object.")
        headers = {str(k): _text(v) for k, v in decoded.items()}
    headers = {k: v for k, v in headers.items() if k.lower() not in ("content-type", "accept")}
    return {**headers, "Content-Type": "application/json", "Accept": "application/json",
            "X-Metabase-Action": action_name}


def _decoded(body: bytes, text: str) -> Any:
    if not body:
        return None
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return text


def run(session, action, detail, values: dict) -> Response:
    template = detail.template or {}
    url = substitute(template.get("url"), values, "url")
    headers = _headers(substitute(template.get("headers"), values, "headers"), action.name)
    body = substitute(template.get("body"), values, "body")
    registry = tessera().settings
    response = outbound.fetch(str(template.get("method") or "GET"), url, headers=headers, body=body,
                              allowed_cidrs=outbound.allowed_cidrs(registry, session))
    document = {"body": _decoded(response.body, response.text), "headers": response.headers,
                "status": response.status}
    try:
        error = jq_handles.apply(document, detail.error_handle or DEFAULT_ERROR_HANDLE)
        if error is not None and error is not False:
            return json_response({"remote-status": response.status} if error is True else error, 400)
        if detail.response_handle:
            result = jq_handles.apply(document, detail.response_handle)
            if result is not None:
                return json_response(result, 200)
    except jq_handles.JsonQueryError as exc:
        raise Invalid(f"Problem building request: {exc}") from None
    return Response(status=204)
