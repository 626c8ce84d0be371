"""Setup logic. The token is a setting row consumed in the same transaction that creates the first
admin, so two concurrent setups have exactly one winner (compat/security.md threat 1)."""
from __future__ import annotations

import json
import uuid

from flask import current_app
from sqlalchemy import delete, exists, insert, literal, select
from sqlalchemy.orm import Session

from core.appdb.models import Setting, User
from core.http.errors import ApiError, Invalid
from core.identity import users
from core.identity.passwords import constant_time_equals

TOKEN_KEY = "setup-token"
ALREADY_SET_UP = ("The /api/setup route can only be used to create the first user, however a user currently exists.")


class AlreadySetUp(ApiError):
    status = 403
    message = ALREADY_SET_UP


def ensure_setup_token(session: Session) -> None:
    """Seed the token while no user exists. The check and the insert are one statement: an instance that
    starts while another one's first user is being set up must not seed a token again after setup consumed
    it (a separate check read "no user" before the setup committed)."""
    if session.get(Setting, TOKEN_KEY) is not None:
        return
    no_user = ~exists().where(User.type == "personal")
    token = select(literal(TOKEN_KEY), literal(json.dumps(str(uuid.uuid4())))).where(no_user)
    session.execute(insert(Setting).from_select(["key", "value"], token))


def setup_token(session: Session) -> str | None:
    if users.has_users(session):
        return None
    row = session.get(Setting, TOKEN_KEY)
    return json.loads(row.value) if row else None


def has_user_setup(session: Session) -> bool:
    return users.has_users(session)


def set_up(session: Session, *, token: str, user: dict, prefs: dict) -> tuple:
    """Create the first superuser and its session; returns (user, session token)."""
    from core.http import auth

    if users.has_users(session):
        raise AlreadySetUp()
    stored = setup_token(session)
    if stored is None:
        # The token row is gone: a concurrent setup consumed it between our two reads.
        raise AlreadySetUp()
    if not constant_time_equals(stored, token):
        raise Invalid({"token": "Token does not match the setup token."})
    state = current_app.extensions["tessera"]
    auth.check_password_rules(user["password"], "password")
    # Consuming the token is the lock: a concurrent setup finds no row to delete and loses.
    consumed = session.execute(delete(Setting).where(Setting.key == TOKEN_KEY, Setting.value == json.dumps(stored)))
    if consumed.rowcount != 1:
        session.rollback()
        raise AlreadySetUp()
    admin = users.create_user(
        session, email=user["email"], first_name=user.get("first_name"), last_name=user.get("last_name"),
        password_hash=state.hasher.hash(user["password"]), is_superuser=True,
    )
    settings = state.settings
    settings.set(session, "site-name", prefs["site_name"])
    settings.set(session, "admin-email", admin.email)
    if prefs.get("site_locale"):
        settings.set(session, "site-locale", prefs["site_locale"])
    settings.set(session, "anon-tracking-enabled", True)
    token_out = auth.create_session(session, admin)
    session.commit()
    return admin, token_out

