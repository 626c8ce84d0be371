"""One query run's context: the QueryContext every execute_query implementation reads, and the
settings a run consults (read once per run into the session's info), the week start, the query hash
and the statement timeout.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
from sqlalchemy.orm import Session

from core.appdb.models import Database, User
from core.policy.principal import Principal, SharedGrant, account_of, is_grant

from . import native as N

DEFAULT_TIMEOUT_MINUTES = 20
# The four engines' DBAPIs all take SQLAlchemy text() binds through Driver.execute.
PARAMSTYLE = "sqlalchemy"


@dataclass
class QueryContext:
    """Everything one run needs; hook implementations read it and wrappers may adjust it."""

    session: Session
    # Who runs it: a user, the anonymous grant of a public link or embed (both a Principal), or None
    # (the server's own runs). One field, so a run cannot hold a user and a grant at once.
    viewer: Principal | None
    dataset_query: dict
    query: Any  # core.query.model.Query
    database: Database
    driver: Any
    context: str = "ad-hoc"
    constraints: dict | None = None
    export_format: str | None = None
    card_id: int | None = None
    dashboard_id: int | None = None
    ignore_cache: bool = True
    cache_ttl: int | None = None  # hours, as Metabase's card and database cache_ttl
    native: N.NativeSQL | None = None
    download_cap: int | None = None  # "limited" download permission: 10,000 rows
    max_rows: int | None = None
    limit_from_constraints: bool = False
    timeout: float | None = None
    started_at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.timezone.utc))
    started: float = field(default_factory=time.monotonic)
    query_hash: str = ""
    js_int_to_string: bool = True
    # Metabase's `disable-remaps?` middleware option: no remapped columns (core.query.remaps).
    disable_remaps: bool = False
    average_execution_time: int | None = None
    # The viewer's row and column restrictions on the database (core.query.restrictions.RowPolicy).
    row_policy: Any = None
    extras: dict = field(default_factory=dict)

    @property
    def user(self) -> User | None:
        """The account running the query (the query log's executor); None for a grant's run."""
        return account_of(self.viewer)

    @property
    def grant(self) -> SharedGrant | None:
        """The shared object's grant when a public link or embed runs the query."""
        return self.viewer if is_grant(self.viewer) else None

    @property
    def is_native(self) -> bool:
        return self.native is not None

    @property
    def aggregated(self) -> bool:
        return not self.is_native and bool(self.query.aggregated)

    @property
    def download(self) -> bool:
        return self.export_format is not None





SETTINGS_MEMO = "tessera.query.settings"
# The settings a run reads, fetched together on its first setting() call. Every stored key asked for
# joins the set (plugins' keys too), so a run's settings cost one app-DB read however many it consults.
_SNAPSHOT_KEYS = dict.fromkeys(("report-timezone", "start-of-week", "db-query-timeout-minutes",
                                "aggregated-query-row-limit", "unaggregated-query-row-limit", "download-row-limit"))
_SNAPSHOT_LOCK = threading.Lock()


def setting(session: Session, key: str, default: Any = None) -> Any:
    """A setting's value, or `default` when no plugin declares it (the plugin may be disabled).

    Read once per query run: the snapshot lives in the session's info and prepare() clears it, so
    the next run (and every other request) reads the values afresh."""
    memo = session.info.get(SETTINGS_MEMO)
    if memo is None or key not in memo:
        memo = _snapshot(session, key, memo)
    value = memo[key]
    return default if value is None else value


def _snapshot(session: Session, key: str, memo: dict | None) -> dict:
    from core.assembly.settings import normalise_key
    from core.http.auth import tessera

    registry = tessera().settings
    definition = registry.definitions.get(normalise_key(key))
    with _SNAPSHOT_LOCK:
        if definition is not None and definition.getter is None:  # computed ones only when asked for
            _SNAPSHOT_KEYS.setdefault(key)
        keys = list(dict.fromkeys([key, *_SNAPSHOT_KEYS])) if memo is None else [key]
    values = registry.get_many(session, keys)
    memo = {**(memo or {}), **{k: values.get(normalise_key(k)) for k in keys}}
    session.info[SETTINGS_MEMO] = memo
    return memo


WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


def week_start(session: Session) -> int:
    name = str(setting(session, "start-of-week", "sunday")).lower()
    return WEEKDAYS.index(name) if name in WEEKDAYS else 6


def query_hash(dataset_query: dict) -> str:
    """SHA-256 of the query without the keys that do not change its answer (Metabase's query hash)."""
    keep = {k: v for k, v in dataset_query.items() if k not in ("constraints", "middleware", "info", "async?",
                                                               "cache-strategy")}
    try:
        text = orjson.dumps(keep, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str)
    except TypeError:  # integers beyond 64 bits
        import json

        text = json.dumps(keep, sort_keys=True, default=str).encode()
    return hashlib.sha256(text).hexdigest()


def timeout_seconds(session: Session, database: Database) -> float:
    """The database's own query timeout (settings "query-timeout-seconds"), else the server's."""
    own = (database.settings or {}).get("query-timeout-seconds")
    if isinstance(own, (int, float)) and not isinstance(own, bool) and own > 0:
        return float(own)
    minutes = setting(session, "db-query-timeout-minutes", DEFAULT_TIMEOUT_MINUTES)
    return float(minutes) * 60
