"""The one permission policy: who may read or write collections, see and query databases, download
results and edit the data model. Every plugin asks here; none reads permission rows itself.

Rules (Metabase's): administrators hold every right. A user's right is the most permissive value
over the groups they belong to; a group without a row holds the least permissive value. Data rows
are per database, or per table when a group's access was set table by table. Personal collections
belong to their owner (and administrators), whatever the graph says. Reading a table for oneself (its
metadata, its fields' values, x-rays) needs its query permission, as in Metabase (can_read_table):
viewing data without creating queries reaches it only through saved questions and dashboards.

The `check_permission` hook may overrule any boolean answer: any False denies, otherwise any True
grants; when every implementation abstains (None) the rules above decide. Any error while deciding
denies (fail closed).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import NamedTuple

from flask import current_app
from sqlalchemy import String, bindparam, cast, event, func, literal, or_, select, union
from sqlalchemy.orm import Session

from core.appdb import memo
from core.appdb.models import (
    Collection,
    CollectionPermission,
    Database,
    DataPermission,
    PermissionsGroupMembership,
    Table,
    User,
)
from core.appdb.models.permissions import DATA_PERM_VALUES

from .principal import Principal, account_of

COLLECTION_LEVELS = ("write", "read", "none")  # most permissive first

# The view-data values with which a user works with a table's data themselves (queries, its metadata and
# values); "legacy-no-self-service" shows the data only through saved questions and dashboards.
SELF_SERVICE_ACCESS = ("unrestricted", "sandboxed", "impersonated")

# What a user blocked from a database may still see of it.
BLOCKED_DATABASE_KEYS = ("id", "name", "tables")


# --------------------------------------------------------------------------------------------------
# Who the user is. Every function here takes a core.policy.principal.Principal (or None) as `user` and
# reads only its account: a shared object's grant has none, so it is answered as nobody (no group, no
# right); what a grant reads is core.query.access's decision.
# --------------------------------------------------------------------------------------------------


def is_admin(user: Principal | None) -> bool:
    user = account_of(user)
    return bool(user is not None and user.is_active and user.is_superuser)


# Answers are cached in session.info for the life of a transaction: a request asking about hundreds
# of tables reads each user's groups and each database's rows once, a card's GET each collection's
# level once. Commit, rollback, any write through the session (a flush or an INSERT/UPDATE/DELETE
# statement) and the membership helpers of core.identity.users clear the cache, so a change is seen
# by the next question.
CACHE_KEY = "tessera.permissions"


def _cache(session: Session) -> dict:
    return session.info.setdefault(CACHE_KEY, {})


def clear_cache(session: Session) -> None:
    session.info.pop(CACHE_KEY, None)


def in_transaction(session: Session, key: tuple, compute):
    """compute(), cached for the rest of the transaction like the answers here (a request asks its
    audience several times). Only for values that follow from answers cached here already (a cached value
    brings no memo answer's tables to the request's reads)."""
    cache = _cache(session)
    if key not in cache:
        cache[key] = compute()
    return cache[key]


@contextmanager
def asked_afresh(session: Session):
    """Answers asked without this transaction's cache (and what they cache dropped after): each one
    reads what it uses with SQL or from core.appdb.memo, so a memo answer computed from them depends
    on every table they used (a cached answer would bring its value without its tables)."""
    kept = session.info.pop(CACHE_KEY, None)
    try:
        yield
    finally:
        session.info.pop(CACHE_KEY, None)
        if kept is not None:
            session.info[CACHE_KEY] = kept


@event.listens_for(Session, "after_commit")
@event.listens_for(Session, "after_rollback")
@event.listens_for(Session, "after_flush")
def _clear_after_transaction(session: Session, *_flush_context) -> None:
    clear_cache(session)


@event.listens_for(Session, "do_orm_execute")
def _clear_after_write(state) -> None:
    # A write in the transaction (ORM flush above, or a Core statement here) may change a membership,
    # a grant or a collection's place: the next question reads again. Reads keep the cache.
    if state.is_insert or state.is_update or state.is_delete:
        clear_cache(state.session)


_GROUP_IDS = select(PermissionsGroupMembership.group_id).where(PermissionsGroupMembership.user_id == bindparam("user_id"))


def group_ids(session: Session, user: Principal | None) -> list[int]:
    user = account_of(user)
    if user is None:
        return []
    cache = _cache(session)
    key = ("groups", user.id)
    if key not in cache:
        user_id = user.id  # the compute uses this id only: it depends on the memberships alone
        cache[key] = memo.get_or_compute(session, ("permissions", key),
                                          lambda: tuple(session.scalars(_GROUP_IDS, {"user_id": user_id})), alone=True)
    return list(cache[key])


def _data_rows(session: Session, groups: list[int], database_id: int, perm_type: str) -> list[tuple]:
    """(group_id, table_id, value) rows of one database and type for some groups. Every type of the
    database is read at once: a card's GET asks three of them."""
    cache = _cache(session)
    groups_key = tuple(sorted(groups))
    key = ("data", database_id, perm_type, groups_key)
    if key not in cache:
        def read() -> dict[str, tuple]:
            by_type: dict[str, list] = {name: [] for name in DATA_PERM_VALUES}
            for perm, group_id, table_id, value in session.execute(select(
                    DataPermission.perm_type, DataPermission.group_id, DataPermission.table_id,
                    DataPermission.perm_value).where(DataPermission.db_id == database_id,
                                                     DataPermission.group_id.in_(groups))):
                by_type.setdefault(perm, []).append((group_id, table_id, value))
            return {name: tuple(rows) for name, rows in by_type.items()}

        # Kept across requests while the app DB is unchanged (core.appdb.memo): a grant is a commit.
        by_type = memo.get_or_compute(session, ("permissions", "data", database_id, groups_key), read, alone=True)
        for name, rows in by_type.items():
            cache[("data", database_id, name, groups_key)] = rows
        cache.setdefault(key, ())
    return cache[key]


def advanced_permissions_enabled(session: Session) -> bool:
    """Group managers exist only while the advanced-permissions setting (plugins.permissions) is on."""
    try:
        from flask import current_app

        registry = current_app.extensions["tessera"].settings
        if "advanced-permissions" not in registry.definitions:
            return False
        return bool(registry.get(session, "advanced-permissions"))
    except RuntimeError:  # outside an app context nothing turns the feature on
        return False


def managed_group_ids(session: Session, user: User) -> set[int]:
    """The groups `user` manages; empty while advanced permissions are off."""
    user = account_of(user)
    if user is None or not advanced_permissions_enabled(session):
        return set()
    return set(session.scalars(select(PermissionsGroupMembership.group_id).where(
        PermissionsGroupMembership.user_id == user.id, PermissionsGroupMembership.is_group_manager.is_(True))))


def is_group_manager(session: Session, user: User, group_id: int | None = None) -> bool:
    managed = managed_group_ids(session, user)
    return bool(managed) if group_id is None else group_id in managed


# --------------------------------------------------------------------------------------------------
# The check_permission hook
# --------------------------------------------------------------------------------------------------


def _hook_verdict(user: User, action: str, obj: dict) -> bool | None:
    try:
        hook = current_app.extensions["tessera"].pm.hook.check_permission
    except (RuntimeError, KeyError):
        return None
    if not hook.get_hookimpls():  # no plugin implements it (the usual case): no call through pluggy
        return None
    answers = [a for a in hook(user=account_of(user), action=action, obj=obj) if a is not None]
    if any(a is False for a in answers):
        return False
    if any(a is True for a in answers):
        return True
    return None


def _decide(user: User, action: str, obj: dict, default: bool) -> bool:
    verdict = _hook_verdict(user, action, obj)
    return default if verdict is None else verdict


# --------------------------------------------------------------------------------------------------
# Collections
# --------------------------------------------------------------------------------------------------


def _most_permissive(values, order: tuple[str, ...]) -> str:
    best = len(order) - 1
    for value in values:
        if value in order:
            best = min(best, order.index(value))
    return order[best]


_TOP_OWNER = select(Collection.personal_owner_id).where(Collection.id == bindparam("collection_id"))


def personal_owner_id(session: Session, collection: Collection) -> int | None:
    """The owner of the personal collection that is or contains `collection`, else None."""
    if collection.personal_owner_id is not None:
        return collection.personal_owner_id
    return _top_owner(session, collection.location)


def _top_owner(session: Session, location: str | None) -> int | None:
    """The personal owner of the top ancestor in a collection's `location` ("/1/2/"), if any."""
    ancestors = [int(part) for part in (location or "/").strip("/").split("/") if part]
    return session.scalar(_TOP_OWNER, {"collection_id": ancestors[0]}) if ancestors else None


_PLACE = select(Collection.personal_owner_id, Collection.location).where(Collection.id == bindparam("collection_id"))
GONE = (False, None)


def _place(session: Session, collection_id: int) -> tuple[bool, int | None]:
    """(whether the collection exists, the owner of the personal collection that is or contains it)."""
    def read() -> tuple[bool, int | None]:
        row = session.execute(_PLACE, {"collection_id": collection_id}).first()
        if row is None:
            return GONE
        owner, location = row
        return True, owner if owner is not None else _top_owner(session, location)

    # Kept per collection (not per user): every user asking about it shares the answer.
    return memo.get_or_compute(session, ("permissions", "place", collection_id), read, alone=True)


def personal_owner_of(session: Session, collection_id: int | None) -> int | None:
    """The owner of the personal collection that is or contains the collection `collection_id` (None:
    the root, a collection that is not personal, or none with that id)."""
    return None if collection_id is None else _place(session, collection_id)[1]


def collection_level(session: Session, user: User | None, collection_id: int | None,
                     namespace: str | None = None) -> str:
    """"write", "read" or "none" for `user` on a collection (None: the root of `namespace`)."""
    user = account_of(user)
    if user is None or not user.is_active:
        return "none"
    if user.is_superuser:
        return "write"
    cache = _cache(session)
    key = ("collection", user.id, collection_id, namespace)
    if key not in cache:
        cache[key] = _collection_level(session, user, collection_id, namespace)
    return cache[key]


# The levels a user's groups hold on the root of a namespace, and on one collection. Built once.
_ROOT_LEVELS = select(CollectionPermission.level).where(
    CollectionPermission.collection_id.is_(None), CollectionPermission.namespace == bindparam("namespace"),
    CollectionPermission.group_id.in_(bindparam("groups", expanding=True)))
_GRANTED_LEVELS = select(CollectionPermission.level).where(
    CollectionPermission.collection_id == bindparam("collection_id"),
    CollectionPermission.group_id.in_(bindparam("groups", expanding=True)))


def _collection_level(session: Session, user: User, collection_id: int | None, namespace: str | None) -> str:
    if collection_id is not None:
        exists, owner = _place(session, collection_id)
        if not exists:
            return "none"
        if owner is not None:
            return "write" if owner == user.id else "none"
    groups = tuple(sorted(group_ids(session, user)))

    def granted() -> str:
        if collection_id is None:
            rows = session.scalars(_ROOT_LEVELS, {"namespace": namespace or "", "groups": list(groups)})
        else:
            rows = session.scalars(_GRANTED_LEVELS, {"collection_id": collection_id, "groups": list(groups)})
        return _most_permissive(rows, COLLECTION_LEVELS)

    # What a set of groups holds is the same for each of its members: kept per group set, not per user,
    # so that a hundred people of one team share one answer per collection.
    return memo.get_or_compute(session, ("permissions", "granted", collection_id, namespace, groups), granted,
                               alone=True)


def can_read_collection(session: Session, user: User | None, collection_id: int | None,
                        namespace: str | None = None) -> bool:
    """May `user` see this collection and the items in it? (None: the root collection.)"""
    try:
        allowed = collection_level(session, user, collection_id, namespace) in ("read", "write")
    except Exception:
        return False
    return _decide(user, "read", {"model": "collection", "id": collection_id, "namespace": namespace}, allowed)


def can_write_collection(session: Session, user: User | None, collection_id: int | None,
                         namespace: str | None = None) -> bool:
    """May `user` add, change or archive items in this collection, or the collection itself?"""
    try:
        allowed = collection_level(session, user, collection_id, namespace) == "write"
    except Exception:
        return False
    return _decide(user, "write", {"model": "collection", "id": collection_id, "namespace": namespace}, allowed)


# An item (card, dashboard, snippet, timeline...) is readable or writable exactly as its collection.
can_read_item = can_read_collection
can_write_item = can_write_collection


def readable_collection_ids(session: Session, user: User, namespace: str | None = None) -> set[int] | None:
    """Ids of every non-root collection `user` may read, or None meaning all (administrators).

    For list queries: filter with `Collection.id.in_(ids)` unless None; the root is asked separately
    with can_read_collection(session, user, None)."""
    return _collection_ids(session, user, ("read", "write"))


def writable_collection_ids(session: Session, user: User) -> set[int] | None:
    """Ids of every non-root collection `user` may write, or None meaning all (administrators).

    The bulk twin of can_write_collection for listings; like readable_collection_ids it does not
    consult the check_permission hook, so callers use it only while permission_hooks_active() is
    False and ask can_write_collection per object otherwise."""
    return _collection_ids(session, user, ("write",))


# Every non-root collection a user holds a level on, with that level: the granted rows of their groups,
# and their personal collection and everything under it ("write", in the same statement). Built once.
_OWN_PERSONAL = select(Collection.id).where(Collection.personal_owner_id == bindparam("user_id")).scalar_subquery()
_COLLECTION_LEVELS = union(
    select(CollectionPermission.collection_id, CollectionPermission.level).where(
        CollectionPermission.collection_id.is_not(None),
        CollectionPermission.group_id.in_(bindparam("groups", expanding=True)),
        CollectionPermission.level.in_(("read", "write"))),
    select(Collection.id, literal("write")).where(or_(
        Collection.personal_owner_id == bindparam("user_id"),
        Collection.location.like(literal("/") + cast(_OWN_PERSONAL, String) + literal("/%")))))


def _collection_ids(session: Session, user: Principal | None, levels: tuple[str, ...]) -> set[int] | None:
    user = account_of(user)
    if is_admin(user):
        return None
    if user is None:
        return set()
    cache = _cache(session)
    key = ("collection ids", user.id, levels)
    if key not in cache:
        # Readable and writable ids come from one statement: a listing asks both.
        user_id, groups = user.id, group_ids(session, user)
        rows = memo.get_or_compute(session, ("permissions", "collection levels", user_id, tuple(sorted(groups))),
                                   lambda: tuple(session.execute(_COLLECTION_LEVELS,
                                                                 {"user_id": user_id, "groups": groups})),
                                   alone=True)
        cache[("collection ids", user.id, ("read", "write"))] = frozenset(cid for cid, _level in rows)
        cache[("collection ids", user.id, ("write",))] = frozenset(cid for cid, level in rows if level == "write")
    return set(cache[key])


def permission_hooks_active() -> bool:
    """Does any plugin implement check_permission? While none does, the bulk id sets above give
    exactly the per-object answers."""
    try:
        pm = current_app.extensions["tessera"].pm
    except (RuntimeError, KeyError):
        return False
    return bool(pm.hook.check_permission.get_hookimpls())


# --------------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------------


class _Row(NamedTuple):
    group_id: int
    table_id: int | None
    perm_value: str


def _group_value(rows: list[_Row], perm_type: str, table_id: int | None, whole_db: bool,
                 table_count: int) -> str:
    """One group's value from its rows for one database: the table's row, else the database row.
    Asked about the whole database of a group set table by table: the most permissive table value,
    or with whole_db the least permissive one (a right over the whole database needs every table)."""
    order = DATA_PERM_VALUES[perm_type]
    db_rows = [r.perm_value for r in rows if r.table_id is None]
    if db_rows:
        return _most_permissive(db_rows, order)
    if table_id is not None:
        return _most_permissive([r.perm_value for r in rows if r.table_id == table_id], order)
    table_rows = [r.perm_value for r in rows]
    if not table_rows:
        return order[-1]
    if whole_db:
        if len({r.table_id for r in rows}) < table_count:
            return order[-1]
        return order[max(order.index(v) if v in order else len(order) - 1 for v in table_rows)]
    return _most_permissive(table_rows, order)


def data_permission(session: Session, user: User | None, database_id: int, perm_type: str,
                    table_id: int | None = None, whole_db: bool = False) -> str:
    """The user's value of one data permission type on a database (or one of its tables)."""
    order = DATA_PERM_VALUES[perm_type]
    user = account_of(user)
    if user is None or not user.is_active:
        return order[-1]
    if user.is_superuser:
        return order[0]
    groups = group_ids(session, user)
    rows = [_Row(*row) for row in _data_rows(session, groups, database_id, perm_type)]
    by_group: dict[int, list[_Row]] = {}
    for row in rows:
        by_group.setdefault(row.group_id, []).append(row)
    table_count = 0
    if whole_db and table_id is None and any(r.table_id is not None for r in rows):
        table_count = session.scalar(select(func.count()).select_from(Table).where(Table.db_id == database_id))
    values = [_group_value(group_rows, perm_type, table_id, whole_db, table_count)
              for group_rows in by_group.values()]
    return _most_permissive(values, order)


def group_data_access(session: Session, group_id: int, database_id: int, table_id: int) -> str:
    """One group's own view-data value on a table (not a user's: no other group, no hook). Row-level
    security asks it to tell which of a user's groups sandbox a table."""
    rows = [_Row(*row) for row in _data_rows(session, [group_id], database_id, "view-data")]
    return _group_value(rows, "view-data", table_id, False, 0) if rows else DATA_PERM_VALUES["view-data"][-1]


def data_access(session: Session, user: User | None, database_id: int, table_id: int | None = None) -> str:
    """view-data: "unrestricted", "legacy-no-self-service", "blocked" (or "sandboxed"/"impersonated"
    when an extension wrote such rows). Without a table: the best access to any of its tables."""
    try:
        value = data_permission(session, user, database_id, "view-data", table_id)
    except Exception:
        return "blocked"
    verdict = _hook_verdict(user, "view-data", {"model": "database", "id": database_id, "table_id": table_id})
    if verdict is False:
        return "blocked"
    if verdict is True and value == "blocked":
        return "unrestricted"
    return value


def can_see_data(session: Session, user: User | None, database_id: int, table_id: int | None = None) -> bool:
    return data_access(session, user, database_id, table_id) != "blocked"


def tables_with_data_access(session: Session, user: User | None, database_id: int, table_ids) -> set[int]:
    """The ids among `table_ids` (tables of one database) whose data `user` may see: can_see_data
    for many tables with one query for the rows. With a check_permission hook registered, each
    table is asked of can_see_data so that the hook decides as usual."""
    return _tables_where(session, user, database_id, table_ids, can_see_data,
                         lambda value: value("view-data") != "blocked")


def readable_table_ids(session: Session, user: User | None, database_id: int, table_ids) -> set[int]:
    """The ids among `table_ids` (tables of one database) that `user` may read (can_read_table), with
    one query for the rows; with a check_permission hook registered, each table is asked as usual."""
    return _tables_where(session, user, database_id, table_ids, can_read_table,
                         lambda value: (value("view-data") in SELF_SERVICE_ACCESS
                                        and value("create-queries") != "no"))


def _tables_where(session: Session, user: User | None, database_id: int, table_ids, one, allowed) -> set[int]:
    """The tables among `table_ids` for which `allowed(value)` holds, `value(perm_type)` being the user's
    value of that type on the table, read from the database's rows once; `one(session, user, db, table)`
    answers table by table while a check_permission hook may overrule the rows."""
    table_ids = list(table_ids)
    if not table_ids:
        return set()
    if permission_hooks_active():
        return {t for t in table_ids if one(session, user, database_id, t)}
    user = account_of(user)
    if user is None or not user.is_active:
        return set()
    if user.is_superuser:
        return set(table_ids)
    try:
        groups = group_ids(session, user)
        by_type: dict[str, dict[int, list[_Row]]] = {}

        def value_for(table_id: int):
            def value(perm_type: str) -> str:
                if perm_type not in by_type:
                    by_type[perm_type] = {}
                    for row in _data_rows(session, groups, database_id, perm_type):
                        by_type[perm_type].setdefault(row[0], []).append(_Row(*row))
                return _most_permissive([_group_value(rows, perm_type, table_id, False, 0)
                                         for rows in by_type[perm_type].values()], DATA_PERM_VALUES[perm_type])
            return value

        return {t for t in table_ids if allowed(value_for(t))}
    except Exception:  # fail closed, as every other answer here
        return set()


def restrict_blocked(database_json: dict) -> dict:
    """What a user blocked from a database sees of it: only its name, id and tables."""
    return {key: database_json[key] for key in BLOCKED_DATABASE_KEYS if key in database_json}


def can_query(session: Session, user: User | None, database_id: int, native: bool = False,
              table_id: int | None = None) -> bool:
    """May `user` run (and save) a query builder query on the database (on `table_id` when given),
    or, with native=True, a native query (which needs the right over the whole database)?"""
    try:
        account = account_of(user)
        if account is None or not account.is_active:
            return False
        if native:
            allowed = (data_access(session, user, database_id) in ("unrestricted", "impersonated")
                       and data_permission(session, user, database_id, "create-queries", whole_db=True)
                       == "query-builder-and-native")
        else:
            allowed = (data_access(session, user, database_id, table_id) in SELF_SERVICE_ACCESS
                       and data_permission(session, user, database_id, "create-queries", table_id) != "no")
    except Exception:
        return False
    obj = {"model": "database", "id": database_id, "table_id": table_id}
    return _decide(user, "native" if native else "query", obj, allowed)


def can_read_table(session: Session, user: User | None, database_id: int, table_id: int | None = None) -> bool:
    """May `user` read a table (without one: some table of the database) for themselves: its metadata,
    its fields and their values, stored or read live (search, remapping, summary), its x-rays?

    Metabase's read of a table is its query permission (view-data unrestricted and create-queries at
    least query-builder): whoever may view the data but not query it sees it only through the saved
    questions and dashboards they may read, each of which authorises its own reads."""
    return can_query(session, user, database_id, table_id=table_id)


def can_read_database(session: Session, user: User | None, database_id: int) -> bool:
    """May `user` see a database's metadata (Metabase's read of a database): read some table of it,
    or manage it or edit the data model of some table of it, unless its data is blocked for them."""
    return can_read_table(session, user, database_id) or (
        can_see_data(session, user, database_id)
        and (can_manage_database(session, user, database_id) or can_edit_data_model(session, user, database_id)))


def has_any_native_permission(session: Session, user: User | None) -> bool:
    """May `user` write native queries on at least one database? (What snippets require.)"""
    user = account_of(user)
    if user is None or not user.is_active:
        return False
    if is_admin(user):
        return True
    if permission_hooks_active():  # a hook may grant native rights that no row holds
        db_ids = session.scalars(select(Database.id))
    else:
        db_ids = session.scalars(select(DataPermission.db_id).where(
            DataPermission.group_id.in_(group_ids(session, user)), DataPermission.perm_type == "create-queries",
            DataPermission.perm_value == "query-builder-and-native").distinct())
    return any(can_query(session, user, db_id, native=True) for db_id in db_ids)


def can_read_snippet(session: Session, user: User | None, collection_id: int | None) -> bool:
    """Snippets are for native-query writers (Metabase: native rights on some database, not
    sandboxed) who may also read the snippet's folder (a collection of the snippets namespace)."""
    return (has_any_native_permission(session, user) and not is_sandboxed(session, user)
            and can_read_collection(session, user, collection_id, "snippets"))


def can_write_snippet(session: Session, user: User | None, collection_id: int | None) -> bool:
    """As can_read_snippet, with write permission on the folder."""
    return (has_any_native_permission(session, user) and not is_sandboxed(session, user)
            and can_write_collection(session, user, collection_id, "snippets"))


def download_level(session: Session, user: User | None, database_id: int, table_id: int | None = None) -> str:
    """"full" (up to 1,000,000 rows), "limited" (10,000 rows) or "none"."""
    try:
        if data_access(session, user, database_id, table_id) == "blocked":
            return "none"
        value = data_permission(session, user, database_id, "download", table_id)
    except Exception:
        return "none"
    verdict = _hook_verdict(user, "download", {"model": "database", "id": database_id, "table_id": table_id})
    if verdict is False:
        return "none"
    return value


def can_edit_data_model(session: Session, user: User | None, database_id: int, table_id: int | None = None) -> bool:
    """May `user` change table and field metadata (display names, semantic types, visibility)?"""
    try:
        allowed = data_permission(session, user, database_id, "data-model", table_id) == "all"
    except Exception:
        return False
    return _decide(user, "data-model", {"model": "database", "id": database_id, "table_id": table_id}, allowed)


def can_manage_database(session: Session, user: User | None, database_id: int) -> bool:
    """May `user` see and edit the connection details of the database ("details: yes")?"""
    try:
        allowed = data_permission(session, user, database_id, "details") == "yes"
    except Exception:
        return False
    return _decide(user, "details", {"model": "database", "id": database_id}, allowed)


def can_execute_actions(session: Session, user: User | None, database_id: int) -> bool:
    """May `user` run actions against the database (the execution graph)?"""
    try:
        allowed = data_permission(session, user, database_id, "execute") == "all"
    except Exception:
        return False
    return _decide(user, "execute", {"model": "database", "id": database_id}, allowed)


def is_sandboxed(session: Session, user: User | None) -> bool:
    """Does row-level security (a "sandboxed" view-data value) restrict `user` on some table?

    plugins.sandboxes writes such values (without it the graph refuses them with 402). A
    grant is never sandboxed: it has no account, and its shared object authorises what it reads."""
    user = account_of(user)
    if user is None or is_admin(user):
        return False
    if not user.is_active:
        return False  # data_permission answers the least value for an inactive account
    groups = group_ids(session, user)

    def read() -> bool:
        # A database's or a table's "sandboxed" row counts unless another group's value lifts it there.
        rows = set(session.execute(select(DataPermission.db_id, DataPermission.table_id).where(
            DataPermission.group_id.in_(groups), DataPermission.perm_type == "view-data",
            DataPermission.perm_value == "sandboxed")))
        for db_id, table_id in rows:
            if table_id is None:
                table_ids = session.scalars(select(Table.id).where(Table.db_id == db_id))
                if any(data_permission(session, user, db_id, "view-data", t) == "sandboxed" for t in table_ids):
                    return True
            elif data_permission(session, user, db_id, "view-data", table_id) == "sandboxed":
                return True
        return False

    # Asked on every result-cache hit; what the groups hold decides it, so it is kept per group set.
    return memo.get_or_compute(session, ("permissions", "sandboxed", tuple(sorted(groups))), read, alone=True)
