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

from typing import Any, Callable, Iterable

from sqlalchemy.orm import Session

from core.appdb import memo

from .permissions import (
    asked_afresh,
    group_ids,
    in_transaction,
    is_admin,
    is_sandboxed,
    permission_hooks_active,
    personal_owner_of,
)
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
    return in_transaction(session, ("audience", account.id),
                          lambda: ("groups", bool(account.is_active), *sorted(group_ids(session, account))))


def group_decided(text: bytes) -> bool:
    """Whether the permission answers of a run of the query whose JSON is `text` follow from the audience alone."""
    return not any(word in text for word in _PER_USER_WORDS) and not permission_hooks_active()


def principal_or_audience(session: Session, principal: Principal | None, text: bytes) -> tuple | None:
    """The audience when the query whose JSON is `text` lets it decide (group_decided), else the principal."""
    # A sandboxed user's answers follow their own attributes too (core.query.restrictions): their own key.
    if account_of(principal) is not None and group_decided(text) and not is_sandboxed(session, principal):
        return audience_key(session, principal)
    return key_of(principal)


def kept_answers(session: Session, principal: Principal | None, key: tuple, compute: Callable[[], Any],
                 collection_ids: Iterable[int | None] = (), weigh: Callable[[Any], int] | None = None) -> Any:
    """compute(): what `principal` may do with one object, asked of core.policy.permissions (the one
    path that decides), kept in core.appdb.memo per audience rather than per user when the audience
    decides it: no check_permission hook is registered (it may decide per user, on anything) and none
    of `collection_ids`, the collections whose rights compute asks, is or lies in a personal collection
    (its owner alone reads it: kept per principal then). Whether one is personal is part of the answer
    kept per audience, so a collection moved into or out of a personal one (a commit of collection) is
    seen. `key` names the object and everything else compute uses besides the app DB. Computed on no
    cache of the transaction's (asked_afresh), so the kept answer depends on every table its answers
    read: a permission change ends it. `weigh` declares a large answer's bytes (core.appdb.memo)."""
    if permission_hooks_active():
        return compute()

    def afresh():
        with asked_afresh(session):
            return compute()

    if account_of(principal) is None:
        return memo.get_or_compute(session, ("audience answers", key, key_of(principal)), afresh, weigh, alone=True)
    collection_ids = tuple(collection_ids)

    def shared():
        if any(personal_owner_of(session, c) is not None for c in collection_ids):
            return _PER_PRINCIPAL
        return afresh()

    found = memo.get_or_compute(session, ("audience answers", key, audience_key(session, principal)), shared,
                                None if weigh is None else lambda value: 0 if value is _PER_PRINCIPAL else weigh(value),
                                alone=True)
    if found is _PER_PRINCIPAL:
        return memo.get_or_compute(session, ("audience answers", key, key_of(principal)), afresh, weigh, alone=True)
    return found


_PER_PRINCIPAL = "per principal"  # kept per audience: a personal collection decides, so per principal
