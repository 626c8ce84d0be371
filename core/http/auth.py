"""Who is calling: login sessions, the session cookie and header, current_user() and the auth gates.

Session tokens are UUID4 strings (Metabase's format); only their SHA-512 is stored, so a copy of
the app DB holds no usable token. API keys authenticate through the same `authenticate` hook,
implemented by the api_keys plugin.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import uuid

from flask import Request, Response, current_app, g, has_app_context, request
from sqlalchemy import bindparam, delete, select
from sqlalchemy import event as sa_event
from sqlalchemy.orm import Session

from core.appdb import counters, memo, rows
from core.appdb.models import LoginSession, User, utcnow
from core.assembly import events
from core.assembly.hookspecs import hookimpl
from core.http import throttle

from .errors import Forbidden, Invalid, Unauthenticated

SESSION_COOKIE = "metabase.SESSION"
TIMEOUT_COOKIE = "metabase.TIMEOUT"
EMBEDDED_SESSION_COOKIE = "metabase.EMBEDDED_SESSION"
SESSION_HEADER = "X-Metabase-Session"
HTTPS_HEADERS = ("X-Forwarded-Proto", "X-Forwarded-Protocol", "X-Url-Scheme", "X-Forwarded-Ssl", "Front-End-Https")


def hash_token(token: str) -> str:
    return hashlib.sha512(token.encode()).hexdigest()


def tessera():
    return current_app.extensions["tessera"]


# --------------------------------------------------------------------------------------------------
# Sessions
# --------------------------------------------------------------------------------------------------


def create_session(session: Session, user: User) -> str:
    token = str(uuid.uuid4())
    session.add(LoginSession(id=hash_token(token), user_id=user.id))
    if user.last_login is None:  # a first sign-in, however made: a system event once the caller commits
        sa_event.listen(session, "after_commit", _joined(user.id), once=True)
    user.last_login = utcnow()
    return token


def _joined(user_id: int):
    def emit(_session) -> None:
        if has_app_context():  # the "user-joined" system event (plugins.subscriptions tells the administrators)
            events.emit("user-joined", user_id)
    return emit


# Built once (with a bind parameter): building the statement cost as much as running it.
_USER_FOR_TOKEN = (select(User, LoginSession.created_at).join(LoginSession, LoginSession.user_id == User.id)
                   .where(LoginSession.id == bindparam("key")))


def user_for_token(session: Session, token: str, max_age_minutes: int) -> User | None:
    # Every authenticated request asks this: the answer is kept while the tables it read are unchanged
    # (core.appdb.memo), and a logout, a deactivation or a deletion in any worker is a commit, which
    # the next request sees. The session's age is checked against the clock every time.
    key = hash_token(token)
    found = memo.get_or_compute(session, ("login-session", key), lambda: _lookup(session, key))
    if found is None:
        return None
    stored, created_at = found
    if utcnow() - created_at > dt.timedelta(minutes=max_age_minutes):
        # Deleted off the request path (core.appdb.counters): this lookup runs inside every request's reads.
        counters.buffer().delete(LoginSession, "id", key)
        return None
    return rows.attach(session, User, stored) if stored[0]["is_active"] else None


def _lookup(session: Session, key: str) -> tuple[tuple, dt.datetime] | None:
    """The session's user as stored values (core.appdb.rows: shared between threads, never an ORM
    object) and its start."""
    row = session.execute(_USER_FOR_TOKEN, {"key": key}).first()
    if row is None:
        return None
    user, created_at = row
    return rows.snapshot(user), created_at


def end_session(session: Session, token: str) -> bool:
    result = session.execute(delete(LoginSession).where(LoginSession.id == hash_token(token)))
    return result.rowcount > 0


def end_all_sessions(session: Session, user_id: int) -> None:
    session.execute(delete(LoginSession).where(LoginSession.user_id == user_id))


STATE_CHANGING = frozenset({"POST", "PUT", "DELETE", "PATCH"})
API_KEY_HEADER = "X-API-KEY"


def check_not_cross_site(req: Request) -> None:
    """403 for a state-changing request that only the session cookie authenticates and that does not
    say it is JSON. A page on another site can make a browser send the cookie with a form or a
    text/plain body, but it cannot set a JSON content type or a custom header without a CORS
    preflight, which Tessera never grants (compat/security.md row 25)."""
    if req.method not in STATE_CHANGING or "HTTP_COOKIE" not in req.environ or SESSION_COOKIE not in req.cookies:
        return
    if req.headers.get(SESSION_HEADER) or req.headers.get(API_KEY_HEADER):
        return
    if req.mimetype == "application/json":
        return
    raise Forbidden("Cookie-authenticated requests that change state must send JSON (Content-Type: "
                    "application/json) or the X-Metabase-Session header.")


def request_token(req: Request) -> str | None:
    # No Cookie header, no parsing (werkzeug builds its cookie dict on first use, on every request).
    cookie = req.cookies.get(SESSION_COOKIE) if "HTTP_COOKIE" in req.environ else None
    return cookie or req.headers.get(SESSION_HEADER) or None


@hookimpl(tryfirst=True)
def authenticate(request, session):
    token = request_token(request)
    if not token:
        return None
    return user_for_token(session, token, tessera().config["TESSERA_MAX_SESSION_AGE"])


# --------------------------------------------------------------------------------------------------
# Logging in
# --------------------------------------------------------------------------------------------------


def login(session: Session, username: str, password: str, ip: str | None) -> str:
    """Check the credentials (throttled per IP and per username, in the app DB) and return a new session token."""
    state = tessera()
    key = username.strip().lower()
    if state.config["TESSERA_DISABLE_SESSION_THROTTLE"]:
        return _login(session, state, username.strip(), password)
    pairs = [(state.throttlers["ip"], ip)] if ip else []
    pairs.append((state.throttlers["username"], key))
    with throttle.attempt(state.db.engine, pairs):
        return _login(session, state, username.strip(), password)


def _login(session: Session, state, username: str, password: str) -> str:
    # A directory (the authenticate_password hook, e.g. LDAP) answers first for the usernames it knows.
    checked = state.pm.hook.authenticate_password(session=session, username=username, password=password)
    if checked is None:
        check_password_allowed(session, username)
        user, token = _local_login(session, state, username.lower(), password)
        method = "password"
    elif checked.user is None:
        session.rollback()
        raise Unauthenticated(body={"errors": {"password": "did not match stored password"}})
    else:
        user, token = checked.user, create_session(session, checked.user)
        method = checked.method
    user_id = user.id
    session.commit()
    events.emit("user-login", user_id, None, method=method)
    return token


def check_password_allowed(session: Session, email: str) -> None:
    """400 when a plugin's policy (the password_refusal hook) refuses passwords for this account now."""
    refusal = tessera().pm.hook.password_refusal(session=session, email=email.strip())
    if refusal is not None:
        raise Invalid(refusal.message)


def _local_login(session: Session, state, key: str, password: str) -> tuple[User, str]:
    user = session.scalar(select(User).where(User.email == key, User.type == "personal"))
    # Always verify, against a dummy hash when there is no such user: timing reveals nothing.
    ok = state.hasher.verify(user.password_hash if user else None, password)
    if not ok or user is None:
        raise Unauthenticated(body={"errors": {"password": "did not match stored password"}})
    if not user.is_active:
        raise Unauthenticated(body={"errors": {"_error": "Your account is disabled."}})
    if state.hasher.needs_rehash(user.password_hash):
        user.password_hash = state.hasher.hash(password)
    return user, create_session(session, user)


def request_is_https(req: Request) -> bool:
    if req.is_secure:
        return True
    for header in HTTPS_HEADERS:
        value = (req.headers.get(header) or "").lower()
        if value in ("https", "on"):
            return True
    return (req.headers.get("Origin") or "").lower().startswith("https://")


def cookie_samesite(session: Session) -> str:
    """The SameSite attribute from the `session-cookie-samesite` setting (lax when no plugin declares it)."""
    value = tessera().settings.get_or(session, "session-cookie-samesite", "lax") or "lax"
    return str(value).capitalize()


def set_session_cookies(response: Response, token: str, remember: bool = False, session: Session | None = None
                        ) -> Response:
    from core.appdb import db

    state = tessera()
    max_age = state.config["TESSERA_MAX_SESSION_AGE"] * 60 if remember else None
    samesite = cookie_samesite(session or db.session())
    # Browsers drop a SameSite=None cookie that is not Secure, so None (for cross-site embeds) implies Secure.
    secure = request_is_https(request) or samesite == "None"
    response.set_cookie(SESSION_COOKIE, token, max_age=max_age, path="/", httponly=True, samesite=samesite,
                        secure=secure)
    response.set_cookie(TIMEOUT_COOKIE, "alive", max_age=max_age, path="/", samesite=samesite, secure=secure)
    return response


def clear_session_cookies(response: Response) -> Response:
    for name in (SESSION_COOKIE, EMBEDDED_SESSION_COOKIE, TIMEOUT_COOKIE):
        response.set_cookie(name, "", expires=0, path="/")
    return response


# --------------------------------------------------------------------------------------------------
# The request's user and the gates
# --------------------------------------------------------------------------------------------------

_UNSET = object()


def current_user() -> User | None:
    """The authenticated user of this request, or None. Asked of the `authenticate` hook once."""
    app_globals = g._get_current_object()  # asked several times per request: one lookup of the proxy
    user = app_globals.__dict__.get("tessera_user", _UNSET)
    if user is _UNSET:
        from core.appdb.db import session

        user = tessera().pm.hook.authenticate(request=request._get_current_object(), session=session())
        app_globals.tessera_user = user
    return user


def require_user() -> User:
    user = current_user()
    if user is None:
        raise Unauthenticated()
    return user


def require_superuser() -> User:
    user = require_user()
    if not user.is_superuser:
        raise Forbidden()
    return user


def check_password_rules(password: object, field: str = "password") -> str:
    state = tessera()
    from core.identity.passwords import TOO_COMMON, is_valid

    if not isinstance(password, str) or not is_valid(
        password, state.config["TESSERA_PASSWORD_COMPLEXITY"], state.config["TESSERA_PASSWORD_LENGTH"]
    ):
        # The password itself is never echoed back in the error.
        received = "nil" if password is None else '"[redacted]"'
        raise Invalid({field: TOO_COMMON}, {field: [f"{TOO_COMMON}, received: {received}"]})
    return password
