"""Connections to registered databases: details validated, engines built locked down, pools cached.

Everything that opens a data source goes through here, so the rules of compat/security.md section 2
hold everywhere: details are parsed by the driver's strict model (unknown keys are a 400 naming the
key), file paths are checked before anything opens them, and every new DBAPI connection is locked
down by its driver before SQLAlchemy hands it out. Engines are cached per database id and rebuilt
when the details change; the pools are listed in app.extensions['tessera'].extras['connection_pools'].
Pools of databases another process deleted or changed are closed by core.driver.stale_pools.
"""
from __future__ import annotations

import hashlib
import logging
import threading
import weakref

import orjson
from pydantic import ValidationError
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine

from core.driver.contract import Details
from core.driver.records import LockdownError
from core.driver.sources import ConnectionPolicy
from core.driver.sql import SQLDriver
from core.http.errors import Invalid, NotFound

_lock = threading.Lock()
log = logging.getLogger("tessera.driver.pools")
# Engines taken out of service (their database deleted or re-pointed). Code that fetched one before may
# still hold it (a sync running through the change): the connections it opens or gives back afterwards
# are closed at check-in instead of pooled, since nothing will dispose the engine again.
_retired: weakref.WeakSet[Engine] = weakref.WeakSet()


def _state():
    from core.http.auth import tessera

    return tessera()


def _policy() -> ConnectionPolicy:
    return ConnectionPolicy.from_config(_state().config)


def _driver(engine: str) -> type[SQLDriver]:
    driver = _state().drivers.get(engine)
    if driver is None:
        raise Invalid({"engine": f"Unknown or unavailable database engine: {engine}"},
                      message=f"Unknown or unavailable database engine: {engine}")
    return driver


def driver_for(database) -> type[SQLDriver]:
    """The driver of a registered database; 404 when its engine is no longer available."""
    driver = _state().drivers.get(database.engine)
    if driver is None:
        raise NotFound(f"The database engine {database.engine!r} is not available on this server.")
    return driver


def parse_details(driver: type[SQLDriver], details: dict) -> Details:
    """The driver's Details model from a raw dict, or Invalid naming each bad key."""
    if not isinstance(details, dict):
        raise Invalid({"details": "value must be a map."})
    try:
        return driver.Details.model_validate(details)
    except ValidationError as exc:
        errors = {}
        for error in exc.errors():
            key = ".".join(str(part) for part in error["loc"]) or "details"
            if error["type"] == "extra_forbidden":
                errors[key] = f"{key} is not a connection property of {driver.display_name}."
            elif error["type"] == "missing":
                errors[key] = "value is required."
            else:
                errors[key] = error["msg"].removeprefix("Value error, ")
        first = next(iter(errors.values()))
        raise Invalid(errors, message=first) from None


def check(driver: type[SQLDriver], details: dict, policy: ConnectionPolicy) -> Details:
    """Parse and statically check details against a policy (no connection made)."""
    return driver.check_details(parse_details(driver, details), policy)


def validate_details(engine: str, details: dict) -> Details:
    """Details for registration: strict model, file paths and the app DB refused, nothing opened.

    The privilege check of server engines (PostgreSQL roles) needs a connection: it runs in the
    driver's `lockdown` on every new connection, so `can_connect` at registration refuses the role.
    """
    return check(_driver(engine), details, _policy())


def build_engine(driver: type[SQLDriver], details: Details, **options) -> Engine:
    """A SQLAlchemy engine whose every new DBAPI connection is locked down before first use."""
    # The driver's own options win: a pool class it needs (DuckDB's) is part of its lockdown.
    # A file connection cannot go stale, so only network engines pay a ping per checkout.
    engine = create_engine(driver.url(details), **{"pool_pre_ping": not driver.in_process(), **options,
                                                   **driver.engine_options(details)})

    @event.listens_for(engine, "connect")
    def _lock_down(dbapi_connection, record):
        driver.lockdown(dbapi_connection, details)

    ref = weakref.ref(engine)  # the listener lives in the engine's pool: no cycle back to it

    @event.listens_for(engine, "checkin")
    def _close_if_retired(dbapi_connection, record):
        if dbapi_connection is not None and ref() in _retired:
            record.invalidate()

    return engine


def retire(engine: Engine) -> None:
    """Close an engine's pooled connections now and each connection still checked out when it comes
    back; one opened through it later lives only until it is given back."""
    _retired.add(engine)
    engine.dispose()


def connection_error(driver: type[SQLDriver], error: BaseException) -> Invalid:
    """Metabase's can-connect failure: a 400 with a message and the fields to check."""
    original = getattr(error, "orig", None) or error
    text = str(original).strip().splitlines()[0] if str(original).strip() else type(original).__name__
    lowered = text.lower()
    fields: dict[str, str] = {}
    if isinstance(original, LockdownError):
        fields = {"user": text}
    elif "password" in lowered or "access denied" in lowered or "authentication" in lowered:
        fields = {"user": "check your username", "password": "check your password"}
        text = "Looks like the Username or Password is incorrect."
    elif "does not exist" in lowered or "unknown database" in lowered:
        fields = {"dbname": "check your database name settings"}
        text = "Looks like the Database name is incorrect."
    elif any(s in lowered for s in ("could not translate host", "name or service not known", "unknown host",
                                    "can't connect", "connection refused", "timeout", "timed out")):
        fields = {"host": "check your host settings", "port": "check your port settings"}
        text = "Hmm, we couldn't connect to the database. Make sure your Host and Port settings are correct"
    return Invalid(fields or {"details": text}, message=text)


def can_connect(engine_name: str, details: dict) -> None:
    """Open one locked-down connection with these details and run a trivial query, or raise Invalid."""
    driver = _driver(engine_name)
    parsed = validate_details(engine_name, details)
    probe = build_engine(driver, parsed, poolclass=_null_pool())
    try:
        with probe.connect() as conn:
            conn.exec_driver_sql(driver.probe_sql).all()
    except Invalid:
        raise
    except Exception as exc:  # a driver's failure to connect is the answer, whatever its class
        raise connection_error(driver, exc) from exc
    finally:
        probe.dispose()


def _null_pool():
    from sqlalchemy.pool import NullPool

    return NullPool


def fingerprint(engine: str, details: dict) -> str:
    """What a cached engine was built from: it is rebuilt when this changes (core.driver.stale_pools)."""
    return hashlib.sha256(orjson.dumps([engine, details], option=orjson.OPT_SORT_KEYS)).hexdigest()


def _pools() -> dict[str, Engine]:
    return _state().extras.setdefault("connection_pools", {})


ENGINES = "_engines"  # in state.extras: database id -> (fingerprint, engine)


def _cache() -> dict[int, tuple[str, Engine]]:
    return _state().extras.setdefault(ENGINES, {})


def engine_for(database) -> Engine:
    """The cached, locked-down engine of a registered database (rebuilt when its details change)."""
    from .crypto import decrypt_details

    driver = driver_for(database)
    raw = decrypt_details(database.details) if isinstance(database.details, str) else dict(database.details or {})
    key = fingerprint(database.engine, raw)
    cache = _cache()
    with _lock:
        cached = cache.get(database.id)
        if cached and cached[0] == key:
            return cached[1]
    engine = build_engine(driver, check(driver, raw, _policy()))
    with _lock:
        old = cache.get(database.id)
        if old and old[0] == key:  # another thread built it meanwhile: keep one pool
            retire(engine)
            return old[1]
        cache[database.id] = (key, engine)
        _pools()[f"db-{database.id}"] = engine
    if old:
        retire(old[1])
    from flask import current_app

    from . import stale_pools

    # Another process may delete the database or change its details: this one closes the pool then.
    stale_pools.watch(current_app._get_current_object(), _state(), held_pools, close_stale)
    return engine


def held_pools(state) -> frozenset:
    """What this process's pools were built from: (database id, fingerprint) each."""
    return frozenset((database_id, key) for database_id, (key, _engine) in state.extras.get(ENGINES, {}).items())


def close_stale(state) -> list[int]:
    """Close the pools of databases deleted, or with other details, in the app DB (another process
    changed them); their ids. Run by core.driver.stale_pools in the app's context."""
    from sqlalchemy import select

    from core.appdb.models import Database

    from .crypto import decrypt_details

    held = dict(state.extras.get(ENGINES, {}))
    if not held:
        return []
    with state.db.session() as session:
        rows = {row.id: (row.engine, row.details) for row in session.execute(
            select(Database.id, Database.engine, Database.details).where(Database.id.in_(list(held))))}
    closed = []
    for database_id, (key, _engine) in held.items():
        row = rows.get(database_id)
        if row is not None:
            engine, details = row
            try:
                raw = decrypt_details(details, state.config) if isinstance(details, str) else dict(details or {})
                if fingerprint(engine, raw) == key:
                    continue
            except ValueError:  # details this process cannot read: a query would fail anyway
                continue
        dispose(database_id, only=key)
        closed.append(database_id)
    if closed:
        log.info("closed the connection pools of databases deleted or changed elsewhere: %s", closed)
    return closed


def dispose(database_id: int, only: str | None = None) -> None:
    """Close the pool of a database (deleted, or details changed); with `only`, just the pool built
    from that fingerprint (not one a request has rebuilt from the new details meanwhile)."""
    with _lock:
        cached = _cache().get(database_id)
        if cached is None or only is not None and cached[0] != only:
            return
        del _cache()[database_id]
        _pools().pop(f"db-{database_id}", None)
    retire(cached[1])


def dispose_all() -> None:
    for database_id in list(_cache()):
        dispose(database_id)
