"""Password reset by e-mail: asking for a link (/auth/forgot_password) and choosing a new password with it
(/auth/reset_password/:token, the URL the API's reset and invitation e-mails link to).

Both go through the API as an anonymous visitor: POST /api/session/forgot_password (the same answer
whether or not the address has an account), GET /api/session/password_reset_token_valid and POST
/api/session/reset_password, whose session cookie signs the person in.
"""
from __future__ import annotations

from flask import request

from core.http import auth
from core.http.internal import call

from . import render
from .render import go, page
from .views import blueprint, fragment, posted

SENT = ("If an account uses that address, a link to choose a new password is on its way. "
        "It works once, for 48 hours.")


@blueprint.get("/auth/forgot_password")
def forgot_password():
    properties = render.properties()
    if not properties.get("has-user-setup"):
        return go("/setup")
    return page("app/forgot_password.html", name="forgot-password", title="Forgot your password?",
                user=auth.current_user(), email_configured=bool(properties.get("email-configured?")),
                email=request.args.get("email") or "")


@blueprint.post("/auth/forgot_password")
def forgot_password_submit():
    body = posted()
    answer = call("POST", "/api/session/forgot_password", json={"email": body.get("email") or ""})
    if not answer.ok:  # no e-mail on this instance, a malformed address, the throttle: never about an account
        return fragment("app/_form_error.html", status=answer.status,
                        message=render_message(answer) or "The link could not be sent.")
    return fragment("app/_form_done.html", message=SENT)


def render_message(answer) -> str:
    body = answer.body if isinstance(answer.body, dict) else {}
    errors = body.get("errors") if isinstance(body.get("errors"), dict) else {}
    return next(iter(errors.values()), None) or answer.message


@blueprint.get("/auth/reset_password/<token>")
def reset_password(token: str):
    answer = call("GET", "/api/session/password_reset_token_valid", query={"token": token})
    valid = answer.ok and isinstance(answer.body, dict) and answer.body.get("valid") is True
    return page("app/reset_password.html", name="reset-password",
                title="Choose a new password" if valid else "This link cannot be used",
                user=auth.current_user(), token=token if valid else "", valid=valid, status=200 if valid else 404)


@blueprint.post("/auth/reset_password")
def reset_password_submit():
    body = posted()
    password = body.get("password") or ""
    if password != (body.get("password_confirm") or ""):
        return fragment("app/_form_error.html", status=400, message="The two passwords are not the same.")
    answer = call("POST", "/api/session/reset_password", json={"token": body.get("token") or "", "password": password})
    if not answer.ok:
        return fragment("app/_form_error.html", status=answer.status,
                        message=render_message(answer) or "The password could not be changed.")
    response = go("/")
    for cookie in answer.cookies:  # the API signed the person in with the new password
        response.headers.add("Set-Cookie", cookie)
    return response
