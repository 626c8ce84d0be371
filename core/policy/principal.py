"""Who a permission question is about: the one protocol (`Principal`) that an account
(core.appdb.models.User) and the anonymous viewer of a shared object (`SharedGrant`) both satisfy, so
every gate, memo key and cache key accepts either without knowing which it holds.

A principal answers two things:
- `principal_key`: its identity in keys, typed: ("user", id) or ("grant", model, id, cards, fields). A key
  never holds a bare id, so the grant of dashboard 3 and user 3 never share a kept plan or cache entry.
- `account`: the user row that group-based rules read (groups, is_superuser, is_active, personal
  collection), or None for a grant. A grant belongs to no group: core.policy.permissions answers it as it
  answers nobody (no right anywhere), and core.query.access alone decides what it reads.

Code that needs the account (permission rows, the query log's executor) asks `account_of`; code that
keys something by who asked uses `key_of`. Neither reads a user's attributes off a principal directly.

A grant built while a signed embed is served carries the embed token's tenant (`tenant`: its user
attributes as sorted pairs, () when the token has none; None for a public link). The embedding code
sets it for the duration of one embed operation (`embedding_tenant`), the grant builders copy it onto
the grant (`current_tenant`), and it is part of the grant's key, so two tenants never share a kept
answer. What the tenant restricts is the business of the `restrict_tables` hook (plugins.sandboxes).
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Protocol, runtime_checkable

if TYPE_CHECKING:
    from core.appdb.models import User


@runtime_checkable
class Principal(Protocol):
    @property
    def principal_key(self) -> tuple: ...

    @property
    def account(self) -> User | None: ...


@dataclass(frozen=True)
class SharedGrant:
    """The anonymous viewer of one shared object (`model`, `id`): it may run `card_ids` as saved
    questions and read the values of `field_ids`. Built by the object's owner (core.content.shared);
    what it may read is decided by core.query.access."""

    model: str
    id: int
    card_ids: frozenset = frozenset()
    field_ids: frozenset = frozenset()
    tenant: tuple | None = None

    @property
    def principal_key(self) -> tuple:
        # JSON-encodable (plans and cache keys are orjson dumps) and complete: two grants of one object
        # read the same only when they list the same cards and fields (and, embedded, the same tenant).
        key = ("grant", self.model, self.id, tuple(sorted(self.card_ids)), tuple(sorted(self.field_ids)))
        return key if self.tenant is None else (*key, ("tenant", self.tenant))

    @property
    def attributes(self) -> dict[str, Any] | None:
        """The embedded tenant's user attributes ({} for an embed without them), None for a public link."""
        return None if self.tenant is None else dict(self.tenant)

    @property
    def account(self) -> None:
        return None


_TENANT: ContextVar[tuple | None] = ContextVar("tessera_embedding_tenant", default=None)


@contextmanager
def embedding_tenant(attributes: Mapping[str, Any] | None) -> Iterator[None]:
    """Within the block, grants built for the shared object carry `attributes` (the embed token's)."""
    token = _TENANT.set(tuple(sorted((attributes or {}).items())))
    try:
        yield
    finally:
        _TENANT.reset(token)


def current_tenant() -> tuple | None:
    """The tenant a grant built now carries: the embed being served's, or None outside one."""
    return _TENANT.get()


def is_grant(principal: object) -> bool:
    return isinstance(principal, SharedGrant)


def account_of(principal: Principal | None) -> User | None:
    """The account whose permission rows decide for `principal`; None for a grant or nobody."""
    return None if principal is None else principal.account


def key_of(principal: Principal | None) -> tuple | None:
    """`principal`'s identity in a memo or cache key (None for nobody)."""
    return None if principal is None else principal.principal_key
