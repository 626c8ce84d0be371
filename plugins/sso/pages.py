"""/auth/sso: where a browser starts and ends a JWT single sign-on.

`GET /auth/sso` sends the person to the identity provider (`jwt-identity-provider-uri`) with the page
to come back to; the provider sends them back with `?jwt=...&return_to=...`, and this page signs them in
with a session made as POST /api/session makes it (core.http.auth), throttled per IP as password logins
are, then redirects to `return_to` when it is a path on this site. Every refusal is a plain-text 4xx
that says why, and makes no session.
"""
from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from flask import Blueprint, Response, redirect, request

from core.appdb import db
from core.assembly import events
from core.assembly.records import Pages
from core.http import auth, throttle
from core.http.errors import ApiError

from . import jwt_sso
from .accounts import sign_in

blueprint = Blueprint("sso", __name__)

JWT_SETTINGS = ("jwt-enabled", "jwt-identity-provider-uri", "jwt-shared-secret", "jwt-attribute-email",
                "jwt-attribute-firstname", "jwt-attribute-lastname", "jwt-attribute-groups", "jwt-group-sync",
                "jwt-group-mappings", "jwt-user-provisioning-enabled")


def pages() -> list[Pages]:
    return [Pages("/auth/sso", blueprint)]


def same_site_path(value: str | None) -> str:
    """`return_to` when it is a relative path on this site ("/" when absent); refused otherwise, so the
    sign-in cannot be used to send someone to another site with a fresh session."""
    if not value:
        return "/"
    parts = urlsplit(value)
    if (not value.startswith("/") or value.startswith("//") or "\\" in value or parts.scheme or parts.netloc
            or any(ord(c) < 0x20 or ord(c) == 0x7f for c in value)):
        raise jwt_sso.SignInRefused("`return_to` must be a path on this site (such as /collection/root).")
    return value


def _refusal(error: ApiError) -> Response:
    errors = getattr(error, "errors", None)  # a throttle's refusal names its field
    message = " ".join(str(v) for v in errors.values()) if isinstance(errors, dict) else error.message
    return Response(message + "\n", status=error.status, mimetype="text/plain")


@blueprint.get("")
def sso():
    """Start (no `jwt`) or finish (with `jwt`) a JWT single sign-on."""
    session = db.session()
    settings = auth.tessera().settings.get_many(session, JWT_SETTINGS)
    try:
        if not settings["jwt-enabled"] or not settings["jwt-identity-provider-uri"]:
            raise jwt_sso.SignInRefused("JWT single sign-on is not enabled on this instance.")
        return_to = same_site_path(request.args.get("return_to"))
        token = request.args.get("jwt")
        if token is None:
            return redirect(_with_query(settings["jwt-identity-provider-uri"], return_to))
        return _sign_in(session, settings, token, return_to)
    except ApiError as error:
        session.rollback()
        return _refusal(error)


def _with_query(uri: str, return_to: str) -> str:
    parts = urlsplit(uri)
    query = urlencode([*parse_qsl(parts.query, keep_blank_values=True), ("return_to", return_to)])
    return urlunsplit(parts._replace(query=query))


def _sign_in(session, settings: dict, token: str, return_to: str) -> Response:
    state = auth.tessera()
    ip = request.remote_addr
    if state.config["TESSERA_DISABLE_SESSION_THROTTLE"] or not ip:
        user_id, session_token = _verified_session(session, state, settings, token)
    else:
        # As a password login: a refusal counts against the IP, a success counts for nothing.
        with throttle.attempt(state.db.engine, [(state.throttlers["ip"], ip)]):
            user_id, session_token = _verified_session(session, state, settings, token)
    events.emit("user-login", user_id, None, method=jwt_sso.SOURCE)
    return auth.set_session_cookies(redirect(return_to), session_token, session=session)


def _verified_session(session, state, settings: dict, token: str) -> tuple[int, str]:
    claims = jwt_sso.verify(token, settings["jwt-shared-secret"])
    jwt_sso.consume(state.db.engine, token, claims)
    user = sign_in(session, jwt_sso.identity(claims, settings), jwt_sso.policy(settings))
    session_token = auth.create_session(session, user)
    session.commit()
    return user.id, session_token
