"""The pages a person without an account opens: /public/question|dashboard/:uuid and
/embed/question|dashboard/:token, with the script and style they load (static/, served here: no CDN).

The server sends only a shell; its script reads the public (/api/public/...) or embed (/api/embed/...)
API like any other client, so a page can show nothing those endpoints would not. Who may frame the
pages is the `embedding-frame-ancestors` setting, applied by core.assembly.pages.
"""
from __future__ import annotations

import re

from core import Pages, SettingDef
from core.http.errors import Invalid

from .views import CONTENT_SECURITY_POLICY, blueprint

FRAME_ANCESTORS = "embedding-frame-ancestors"

# A CSP source expression (scheme, host with an optional leading wildcard, port, path) or a keyword;
# nothing that could end the directive (";", ",") or the header (control characters).
_SOURCE = re.compile(r"\*|'self'|[a-z][a-z0-9+.-]*:|([a-z][a-z0-9+.-]*://)?(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*"
                     r"(:(\d{1,5}|\*))?(/[A-Za-z0-9._~%!$&'()*+=:@/-]*)?", re.IGNORECASE)


def valid_frame_ancestors(value: str) -> str:
    sources = str(value).split(" ")
    sources = [s for s in sources if s]
    if sources == ["'none'"]:
        return "'none'"
    bad = [s for s in sources if not _SOURCE.fullmatch(s)]
    if not sources or bad:
        raise Invalid({"value": "embedding-frame-ancestors must be *, 'none', or origins separated by spaces "
                                "(https://app.example.com https://*.example.com)."})
    return " ".join(sources)


def frame_ancestors(session) -> str | None:
    from flask import current_app

    value = current_app.extensions["tessera"].settings.get_or(session, FRAME_ANCESTORS, "*")
    return None if value in (None, "", "'none'") else value


def settings() -> list[SettingDef]:
    return [SettingDef(
        FRAME_ANCESTORS, default="*", visibility="admin", validate=valid_frame_ancestors,
        description="Which sites may show public links and static embeds (the pages /public/... and /embed/...) "
                    "in a frame: the Content-Security-Policy frame-ancestors sources, separated by spaces "
                    "(https://app.example.com https://*.example.com). * lets any site frame them; 'none' lets "
                    "none. The API and the rest of Tessera are never framed.")]


def pages() -> list[Pages]:
    return [Pages(f"/{kind}", blueprint(kind), frame_ancestors, CONTENT_SECURITY_POLICY)
            for kind in ("public", "embed")]
