"""/auth/sso/NAME and /auth/sso/NAME/callback: where a browser starts and ends an OpenID Connect sign-in
with the provider NAME (oidc.py), on the /auth/sso page blueprint (pages.py; /auth/sso itself is JWT SSO).

`GET /auth/sso/NAME?return_to=/path` remembers the flow in its cookie and sends the person to the
provider; the provider sends them back to `{site-url}/auth/sso/NAME/callback?code=...&state=...`, where
they are signed in with a session made as POST /api/session makes it (core.http.auth), throttled per IP
as password logins are, and sent to `return_to` (same-site paths only). Every refusal is a plain-text
4xx (a 502 when the provider cannot be reached) that says why, clears the flow and makes no session.
"""
from __future__ import annotations

from flask import Response, redirect, request

from core.appdb import db
from core.assembly import events
from core.http import auth, throttle
from core.http.errors import ApiError, Invalid, NotFound

from . import oidc
from .accounts import SignInRefused, sign_in
from .oidc_settings import NAME, Provider, configured
from .pages import _refusal, blueprint, same_site_path


def _provider(session, name: str) -> Provider:
    try:
        providers = configured(session)
    except Invalid as error:
        raise Invalid(f"OpenID Connect is misconfigured: {error.errors.get('value')}") from None
    found = next((p for p in providers if p.name == name), None)
    if found is None:
        raise NotFound(f"There is no OpenID Connect provider named {name!r}.")
    return found


def _allowed_cidrs(session) -> str:
    from core.outbound import http as outbound

    return outbound.allowed_cidrs(auth.tessera().settings, session)


def _site_url(session) -> str:
    return str(auth.tessera().settings.get_or(session, "site-url", None) or request.host_url).rstrip("/")


def _flow_path(name: str) -> str:
    return f"/auth/sso/{name}/"


def _set_flow(response: Response, name: str, value: str, max_age: int) -> Response:
    response.set_cookie(oidc.FLOW_COOKIE, value, max_age=max_age, path=_flow_path(name), httponly=True,
                        samesite="Lax", secure=auth.request_is_https(request))
    return response


@blueprint.get("/<name>")
def oidc_start(name: str):
    """Send the person to the provider, remembering where they came from."""
    session = db.session()
    try:
        provider = _provider(session, name)
        return_to = same_site_path(request.args.get("return_to"))
        redirect_uri = f"{_site_url(session)}/auth/sso/{provider.name}/callback"
        url, flow = oidc.begin(provider, _allowed_cidrs(session), redirect_uri, return_to)
    except ApiError as error:
        session.rollback()
        return _refusal(error)
    return _set_flow(redirect(url), provider.name, oidc.seal(flow), oidc.FLOW_SECONDS)


@blueprint.get("/<name>/callback")
def oidc_callback(name: str):
    """Finish the sign-in the provider sends the person back from."""
    session = db.session()
    try:
        provider = _provider(session, name)
        if request.args.get("error"):
            detail = request.args.get("error_description") or request.args["error"]
            raise SignInRefused(f"{provider.display_name} did not sign you in: {detail}")
        user_id, token, flow = _throttled(session, provider)
    except ApiError as error:
        session.rollback()
        refusal = _refusal(error)
        # The flow is used up; a name no provider could have is no cookie path.
        return _set_flow(refusal, name, "", 0) if NAME.fullmatch(name) else refusal
    events.emit("user-login", user_id, None, method=oidc.SOURCE, provider=provider.name)
    response = auth.set_session_cookies(redirect(flow.return_to), token, session=session)
    return _set_flow(response, provider.name, "", 0)


def _throttled(session, provider: Provider) -> tuple[int, str, oidc.Flow]:
    state = auth.tessera()
    ip = request.remote_addr
    if state.config["TESSERA_DISABLE_SESSION_THROTTLE"] or not ip:
        return _verified_session(session, provider)
    # As a password login: a refusal (a forged state too) counts against the IP, a success for nothing.
    with throttle.attempt(state.db.engine, [(state.throttlers["ip"], ip)]):
        return _verified_session(session, provider)


def _verified_session(session, provider: Provider) -> tuple[int, str, oidc.Flow]:
    flow = oidc.unseal(request.cookies.get(oidc.FLOW_COOKIE), provider.name, request.args.get("state"))
    claims = oidc.complete(provider, _allowed_cidrs(session), flow, request.args.get("code"))
    user = sign_in(session, oidc.identity(provider, claims), oidc.policy(provider))
    token = auth.create_session(session, user)
    session.commit()
    return user.id, token, flow
