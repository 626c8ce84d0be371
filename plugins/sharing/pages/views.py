"""The page shell and its assets. The shell holds no data: only which kind of link it is and the
uuid or token from its own URL, which the script passes back to the API."""
from __future__ import annotations

from html import escape
from pathlib import Path
from urllib.parse import quote

from flask import Blueprint, Response, redirect, request

from core.assembly.pages import Assets

HERE = Path(__file__).parent
STATIC = HERE / "static"
SHELL = (HERE / "page.html").read_text(encoding="utf-8")
ASSETS = Assets(STATIC)

# Scripts, styles, data and pictures come from Tessera alone; no inline script can run, so a card or
# filter name that slipped into the DOM as markup would still execute nothing.
CONTENT_SECURITY_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
                           "connect-src 'self'; base-uri 'none'; form-action 'self'")
RESOURCES = {"question": "question", "dashboard": "dashboard"}


def shell(kind: str, resource: str, token: str) -> Response:
    html = SHELL.format(kind=kind, resource=resource, token=escape(token, quote=True), version=ASSETS.version)
    # The token or uuid is in the page's URL: no Referer may carry it to a site a card links to.
    return Response(html, mimetype="text/html", headers={"Referrer-Policy": "no-referrer",
                                                         "Cache-Control": "no-store"})


def blueprint(kind: str) -> Blueprint:
    """The pages of one kind of link, "public" (uuid) or "embed" (signed token)."""
    pages = Blueprint(f"pages_{kind}", __name__)

    @pages.get("/question/<token>")
    def question(token: str):
        return shell(kind, "question", token)

    if kind == "public":
        # Metabase's download links for a public question: /public/question/<uuid>.csv (json, xlsx)
        # lead to the public API's export, with the same query string (parameters).
        @pages.get("/question/<uuid>.<any(csv, json, xlsx):export_format>")
        def question_download(uuid: str, export_format: str):
            query = request.query_string.decode("latin-1")
            target = f"../../api/public/card/{quote(uuid, safe='')}/query/{export_format}"
            return redirect(target + (f"?{query}" if query else ""), code=302)

    @pages.get("/dashboard/<token>")
    def dashboard(token: str):
        return shell(kind, "dashboard", token)

    @pages.get("/assets/<name>")
    def asset(name: str):
        return ASSETS.response(name)

    return pages
