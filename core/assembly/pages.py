"""Pages outside /api that plugins serve (core.assembly.records.Pages), and who may frame what.

Framing is decided here, once for every response: a page blueprint's responses carry its
Content-Security-Policy with the `frame-ancestors` sources its plugin returns; every other response
(the whole API, the landing page, errors) carries `X-Frame-Options: DENY`, so no page on another site
can put an API answer or the login page under a user's cursor (clickjacking).
"""
from __future__ import annotations

import hashlib
import logging
import re
from pathlib import Path

from flask import Flask, Response, request, send_from_directory
from werkzeug.exceptions import NotFound

from .plugins import PluginError, collect, unique_by
from .records import Pages

log = logging.getLogger("tessera")

# One or more lower-case path segments: "/public", "/embed", "/app/reports".
PREFIX = re.compile(r"(/[a-z0-9][a-z0-9_.-]*)+")
NOT_FRAMED = "'none'"


def mount(app: Flask, pm) -> dict[str, Pages]:
    """Register every plugin's page blueprints; returns them by blueprint name."""
    mounted: dict[str, Pages] = {}
    for prefix, contribution in unique_by(collect(pm, "register_pages"), lambda p: p.prefix, "page prefix").items():
        if prefix != "/" and not PREFIX.fullmatch(prefix) or prefix == "/api" or prefix.startswith("/api/"):
            raise PluginError(f"page prefix {prefix!r} from {contribution.plugin} must be a path outside /api")
        pages: Pages = contribution.item
        app.register_blueprint(pages.blueprint, url_prefix=None if prefix == "/" else prefix)
        mounted[pages.blueprint.name] = pages
    return mounted


def install_frame_headers(app: Flask, pages: dict[str, Pages]) -> None:
    @app.after_request
    def frame_headers(response: Response) -> Response:
        page = pages.get(request.blueprint) if request.blueprint else None
        if page is None:
            response.headers["X-Frame-Options"] = "DENY"
            return response
        sources = _frame_ancestors(page)
        policy = f"{page.content_security_policy}; frame-ancestors {sources or NOT_FRAMED}"
        response.headers["Content-Security-Policy"] = policy
        if not sources:
            response.headers["X-Frame-Options"] = "DENY"
        return response


def _frame_ancestors(page: Pages) -> str | None:
    if page.frame_ancestors is None:
        return None
    from core.appdb.db import session

    try:
        return page.frame_ancestors(session())
    except Exception:  # a policy that cannot be read denies framing; the page itself still answers
        log.exception("frame-ancestors of pages %s could not be read", page.prefix)
        return None


class Assets:
    """A page plugin's scripts and styles: the .js and .css files of one folder, served by name (nothing
    else there is), with a version that changes whenever one of them does, so a browser never mixes a
    cached old script with a new page (pages load them as `<name>?v=<version>`)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.names = frozenset(path.name for path in folder.iterdir() if path.suffix in {".js", ".css"})
        self.version = hashlib.sha256(b"".join((folder / name).read_bytes() for name in sorted(self.names))
                                      ).hexdigest()[:12]

    def response(self, name: str) -> Response:
        if name not in self.names:
            raise NotFound()
        response = send_from_directory(self.folder, name, max_age=0)
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response
