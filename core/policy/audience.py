"""The audience of a principal: what its group-based permission answers depend on, as a key part, so
that kept answers (prepared runs, compiled statements, stored results) are shared by every user who
gets the same answers instead of being kept once per user.

An administrator's answers are all "yes"; an ordinary account's follow from its groups (and its
being active); a shared object's grant is its own audience (core.policy.principal.key_of). Two things
decide per user besides the groups: a personal collection (its owner alone reads it) and a
check_permission hook (it may decide per user). `group_decided(text)` says whether a query's JSON
text can meet neither: it names no card and no snippet (whose collections may be personal) and no
native SQL (whose tags may name them), and no hook is registered. Otherwise the caller keys by the
principal itself.
"""
from __future__ import annotations

from sqlalchemy.orm import Session

from .permissions import group_ids, is_admin, permission_hooks_active
from .principal import Principal, account_of, key_of

# Conservative: any of these in a query's JSON text may bring a card, a snippet or native SQL in.
_PER_USER_WORDS = (b"source-card", b"card__", b"snippet", b"native")


def audience_key(session: Session, principal: Principal | None) -> tuple | None:
    """What `principal`'s group-based permission answers depend on (None for nobody)."""
    account = account_of(principal)
    if account is None:
        return key_of(principal)
    if is_admin(account):
        return ("admin",)
    return ("groups", bool(account.is_active), *sorted(group_ids(session, account)))


def group_decided(text: bytes) -> bool:
    """Whether the permission answers of a run of the query whose JSON is `text` follow from the audience alone."""
    return not any(word in text for word in _PER_USER_WORDS) and not permission_hooks_active()


def principal_or_audience(session: Session, principal: Principal | None, text: bytes) -> tuple | None:
    """The audience when the query whose JSON is `text` lets it decide (group_decided), else the principal."""
    if account_of(principal) is not None and group_decided(text):
        return audience_key(session, principal)
    return key_of(principal)
