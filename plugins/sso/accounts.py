"""Provisioning shared by every sign-in method: the Tessera user for an identity the method verified.

`sign_in` finds the account by e-mail, creates it where the method's settings allow (marked with the
method as its `sso_source`), refreshes names and `login_attributes` from the identity's claims, syncs
the mapped groups and records a "user-login" event. The session itself is made by core.http.auth, as
for a password login: there is one session mechanism.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.appdb.models import ADMIN_GROUP_ID, ALL_USERS_GROUP_ID, PermissionsGroupMembership, User
from core.http.errors import Invalid, Unauthenticated
from core.identity import users


class SignInRefused(Unauthenticated):
    """A 401 with a message a person can act on; no session is made."""

    def __init__(self, message: str):
        super().__init__(message, body={"errors": {"_error": message}})


@dataclass(frozen=True)
class Identity:
    """What a sign-in method verified about a person. `groups` is None when the identity said nothing
    about groups (memberships then stay as they are), a list (possibly empty) when it did."""

    source: str
    email: str
    first_name: str | None = None
    last_name: str | None = None
    groups: list[str] | None = None
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Policy:
    """What the method's settings allow: creating accounts, and group sync with its mappings
    (a group name or DN from the identity -> Tessera group ids)."""

    create_accounts: bool
    group_sync: bool
    group_mappings: dict[str, list[int]]


def sign_in(session: Session, identity: Identity, policy: Policy) -> User:
    """The active user for `identity`, created or updated; raises SignInRefused. The caller commits."""
    email = (identity.email or "").strip().lower()
    if "@" not in email:
        raise SignInRefused("The identity provider did not send an e-mail address.")
    user = session.scalar(select(User).where(func.lower(User.email) == email))
    if user is not None and user.type != "personal":
        raise SignInRefused("This e-mail address belongs to an account that cannot sign in.")
    if user is None:
        if not policy.create_accounts:
            raise SignInRefused("There is no account for this e-mail address, and accounts are not created "
                                "automatically: ask an administrator to add you.")
        user = users.create_user(session, email=email, first_name=identity.first_name,
                                 last_name=identity.last_name, sso_source=identity.source)
    elif not user.is_active:
        raise SignInRefused("Your account is disabled.")
    else:
        user.first_name = identity.first_name or user.first_name
        user.last_name = identity.last_name or user.last_name
    user.login_attributes = dict(identity.attributes) or None
    if policy.group_sync and identity.groups is not None:
        sync_groups(session, user, identity.groups, policy.group_mappings)
    return user


def sync_groups(session: Session, user: User, names: list[str], mappings: dict[str, list[int]]) -> None:
    """Join the groups the identity's names map to and leave the other mapped groups; groups no mapping
    names are never touched, nor is All Users."""
    wanted = {gid for name in names for gid in mappings.get(name, ())}
    mapped = {gid for ids in mappings.values() for gid in ids} - {ALL_USERS_GROUP_ID}
    current = {row.group_id: row for row in session.scalars(
        select(PermissionsGroupMembership).where(PermissionsGroupMembership.user_id == user.id))}
    for gid in sorted(mapped):
        if gid in wanted and gid not in current:
            users.add_membership(session, user, gid)
        elif gid not in wanted and gid in current:
            try:
                users.remove_membership(session, current[gid])
            except Invalid:
                # The last administrator keeps the Administrators group rather than lock everyone out.
                if gid != ADMIN_GROUP_ID:
                    raise
    session.expire(user, ["memberships"])


def check_group_mappings(value: Any) -> dict[str, list[int]]:
    """A `*-group-mappings` setting: {name or DN: [group ids]}."""
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, list) and all(isinstance(i, int) and not isinstance(i, bool)
                                                               for i in v) for k, v in value.items()):
        raise Invalid({"value": "Group mappings must be a map from a group name to a list of group ids."})
    return value
