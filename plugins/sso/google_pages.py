"""/auth/google: the login page's "Sign in with Google" without Google's script (no page loads a CDN).

Metabase's button runs Google's JavaScript library, which hands an ID token to POST
/api/session/google_auth. Here the button starts Google's OpenID Connect redirect instead (implicit flow,
`response_type=id_token`, the only one that needs no client secret, which Metabase's Google settings do
not have): `GET /auth/google` remembers a random state, a nonce and the page to come back to in a short
HttpOnly cookie and sends the browser to Google; Google sends it back to `/auth/google/callback` with
the ID token in the URL fragment, which only the browser sees, so that page's own script
(static/google_callback.js) posts it with the state to `POST /auth/google/callback`. That checks the
state against the cookie (a sign-in started elsewhere is refused), then signs in exactly as
/api/session/google_auth does (google.sign_in_with_token) with the nonce checked too.

Google's console must list `{site-url}/auth/google/callback` as an authorised redirect URI.
TESSERA_GOOGLE_AUTHORIZATION_URL replaces Google's endpoint (tests use a local one).
"""
from __future__ import annotations

import base64
import hmac
import json
import secrets
from pathlib import Path
from urllib.parse import urlencode

from flask import Blueprint, Response, redirect, request, send_file

from core.appdb import db
from core.assembly.records import Pages
from core.http import auth
from core.http.errors import ApiError

from . import google
from .pages import same_site_path

blueprint = Blueprint("sso_google", __name__)
AUTHORIZATION_URL = "https://accounts.google.com/o/oauth2/v2/auth"
COOKIE = "tessera.google_sign_in"
COOKIE_SECONDS = 600
CSP = ("default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; form-action 'self'; "
       "base-uri 'none'")
SCRIPT = Path(__file__).parent / "static" / "google_callback.js"
CALLBACK_PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Signing in with Google</title>
<script defer src="/auth/google/callback.js"></script></head>
<body>
<main>
<h1>Signing in with Google</h1>
<p id="google-status" aria-live="polite">One moment…</p>
<noscript><p role="alert">Signing in with Google needs JavaScript: it reads Google's answer, which only your
browser sees.</p></noscript>
<p id="google-retry" hidden><a href="/auth/login">Back to the sign-in page</a></p>
</main>
</body>
</html>
"""


def pages() -> list[Pages]:
    return [Pages("/auth/google", blueprint, None, CSP)]


def _text(message: str, status: int) -> Response:
    return Response(message + "\n", status=status, mimetype="text/plain")


def _redirect_uri(session) -> str:
    site = auth.tessera().settings.get_or(session, "site-url") or request.host_url
    return site.rstrip("/") + "/auth/google/callback"


@blueprint.get("")
def start():
    """Send the browser to Google with a fresh state and nonce."""
    session = db.session()
    try:
        client_id = google.settings_for_sign_in(session, auth.tessera().settings)["google-auth-client-id"]
        return_to = same_site_path(request.args.get("return_to"))
    except ApiError as error:
        return _text(error.message if not getattr(error, "errors", None) else " ".join(map(str, error.errors.values())),
                     error.status)
    state, nonce = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    endpoint = auth.tessera().config.get("TESSERA_GOOGLE_AUTHORIZATION_URL") or AUTHORIZATION_URL
    query = urlencode({"client_id": client_id, "redirect_uri": _redirect_uri(session), "response_type": "id_token",
                       "scope": "openid email profile", "state": state, "nonce": nonce, "prompt": "select_account"})
    response = redirect(f"{endpoint}?{query}")
    value = base64.urlsafe_b64encode(json.dumps({"state": state, "nonce": nonce, "return_to": return_to}).encode())
    response.set_cookie(COOKIE, value.decode(), max_age=COOKIE_SECONDS, path="/auth/google", httponly=True,
                        samesite="Lax", secure=auth.request_is_https(request))
    return response


@blueprint.get("/callback")
def callback_page():
    return Response(CALLBACK_PAGE, mimetype="text/html")


@blueprint.get("/callback.js")
def callback_script():
    return send_file(SCRIPT, mimetype="text/javascript", max_age=3600)


def _started() -> dict:
    try:
        started = json.loads(base64.urlsafe_b64decode(request.cookies.get(COOKIE, "")))
    except (ValueError, UnicodeError):
        started = None
    return started if isinstance(started, dict) and all(isinstance(started.get(k), str) for k in
                                                          ("state", "nonce", "return_to")) else {}


@blueprint.post("/callback")
def callback():
    """The ID token and state from Google's answer: a session, and where to go."""
    auth.check_not_cross_site(request)
    body = request.get_json(silent=True)
    body = body if isinstance(body, dict) else {}
    started = _started()
    session = db.session()
    try:
        if not started or not hmac.compare_digest(str(body.get("state") or ""), started["state"]):
            raise google.SignInRefused("This Google sign-in was not started here or has expired (wrong state): "
                                       "sign in again.")
        token = google.sign_in_with_token(session, auth.tessera(), str(body.get("id_token") or ""),
                                          request.remote_addr, nonce=started["nonce"])
    except ApiError as error:
        session.rollback()
        errors = getattr(error, "errors", None)
        message = " ".join(str(v) for v in errors.values()) if isinstance(errors, dict) else error.message
        response = Response(json.dumps({"message": message}), status=error.status, mimetype="application/json")
    else:
        response = Response(json.dumps({"location": same_site_path(started["return_to"])}),
                            mimetype="application/json")
        auth.set_session_cookies(response, token, session=session)
    response.delete_cookie(COOKIE, path="/auth/google")
    return response
