"""Webhook destinations: their details checked (Metabase's HTTPDetails), their secrets masked in
responses, and a JSON payload posted to one. Every request goes through core.outbound.http.fetch with
the `http-actions-allowed-cidrs` allow-list; nothing here opens a connection itself.

details: {"url": http(s) URL, "method": "post" (default), "get" or "put", "auth-method": "none",
"header" (auth-info sent as headers), "query-param" (added to the URL's query) or "request-body"
(merged into the JSON body), "auth-info": {name: value}, "fe-form-type": the client's own note}.
"""
from __future__ import annotations

import json
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from core.http.errors import ApiError, Invalid
from core.outbound import http
from core.outbound.targets import check_headers

HTTP_TYPE = "channel/http"
AUTH_METHODS = ("none", "header", "query-param", "request-body")
METHODS = ("post", "get", "put")
MASK = "**MetabasePass**"
MAX_URL = 2048
MAX_INFO = 20


class ChannelTestFailed(ApiError):
    """POST /api/channel/test could not deliver: 400 with Metabase's {message, data} body."""

    status = 400


def check_details(details: object) -> dict:
    """The details reduced to the known keys, or a 400 naming what is wrong."""
    if not isinstance(details, dict):
        raise Invalid({"details": "value must be a map."})
    url = details.get("url")
    if not isinstance(url, str) or not url.strip() or len(url) > MAX_URL:
        raise Invalid({"details": "url must be a non-blank string of at most 2048 characters."})
    try:
        scheme = urlsplit(url.strip()).scheme.lower()
    except ValueError:  # e.g. an unclosed IPv6 bracket
        scheme = ""
    if scheme not in ("http", "https"):
        raise Invalid({"details": "url must be an http or https URL."})
    auth = details.get("auth-method", "none")
    if auth not in AUTH_METHODS:
        raise Invalid({"details": "auth-method must be one of none, header, query-param, request-body."})
    method = details.get("method", "post")
    if not isinstance(method, str) or method.lower() not in METHODS:
        raise Invalid({"details": "method must be one of get, post, put."})
    info = details.get("auth-info") or {}
    if not isinstance(info, dict) or len(info) > MAX_INFO or not all(
            isinstance(k, str) and k and isinstance(v, str) for k, v in info.items()):
        raise Invalid({"details": "auth-info must be a map of names to string values."})
    if auth == "header":
        check_headers(info)  # refused now rather than at every send
    out = {"url": url.strip(), "method": method.lower(), "auth-method": auth, "auth-info": info}
    if isinstance(details.get("fe-form-type"), str):
        out["fe-form-type"] = details["fe-form-type"][:64]
    return out


def masked(details: dict) -> dict:
    """What responses show: every auth-info value replaced by the mask."""
    info = details.get("auth-info") or {}
    return {**details, "auth-info": {k: MASK for k in info}}


def unmasked(new: dict, stored: dict) -> dict:
    """A client sends back what it was shown: a masked value keeps the stored secret."""
    old = stored.get("auth-info") or {}
    info = {k: (old.get(k, "") if v == MASK else v) for k, v in (new.get("auth-info") or {}).items()}
    return {**new, "auth-info": info}


def check_destination(registry, session, details: dict) -> None:
    """Refuse now (400) a URL the guard would refuse at send time; nothing is sent."""
    http.check_destination(_url(details), allowed_cidrs=http.allowed_cidrs(registry, session))


def _url(details: dict) -> str:
    if details.get("auth-method") != "query-param" or not details.get("auth-info"):
        return details["url"]
    parts = urlsplit(details["url"])
    query = parse_qsl(parts.query, keep_blank_values=True) + list(details["auth-info"].items())
    return urlunsplit(parts._replace(query=urlencode(query)))


def post(registry, session, details: dict, payload: dict) -> http.Response:
    """Send the payload; a refused destination, a failed connection or an answer outside 2xx raises
    an OutboundError (a 400 when a request caused it, a recorded failure when a job did)."""
    auth, info = details.get("auth-method"), details.get("auth-info") or {}
    headers = {"Content-Type": "application/json"}
    if auth == "header":
        headers.update(info)
    body = {**payload, **info} if auth == "request-body" else payload
    method = (details.get("method") or "post").upper()
    response = http.fetch(method, _url(details), headers=headers,
                          body=None if method == "GET" else json.dumps(body, default=str),
                          allowed_cidrs=http.allowed_cidrs(registry, session))
    if not 200 <= response.status < 300:
        raise http.OutboundError(f"The webhook answered {response.status}: {response.text[:500]}")
    return response
