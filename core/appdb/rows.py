"""Primary-key reads kept in core.appdb.memo: `get(session, Model, id)` is `session.get(Model, id)`
without SQL while the tables read stay unchanged (core.appdb.changes) (issue 15: a cached card query read only
its card and its database, and those two reads were most of its app-DB cost).

The memo holds the row's column values, never an ORM object (objects belong to one session and one
thread). Each request gets a clean persistent instance of its own made from them, as a query would
load it (committed state, no history, relationships loading on first use), attached to its session;
JSON values are kept as orjson text and decoded per request, so a request that edits its instance in place leaves the memo alone. Outside
a request, or once the request's session has written, it is plain `session.get`.
"""
from __future__ import annotations

import copy
from typing import Any

import orjson
from sqlalchemy import JSON
from sqlalchemy.orm import Session
from sqlalchemy.orm.base import instance_state

from . import memo

_SHAPES: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def _shape(model: type) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(column attribute names, those holding JSON) of a mapped class."""
    shape = _SHAPES.get(model)
    if shape is None:
        mapper = model.__mapper__
        names = tuple(attr.key for attr in mapper.column_attrs)
        json = tuple(attr.key for attr in mapper.column_attrs
                     if any(isinstance(column.type, JSON) for column in attr.columns))
        shape = _SHAPES[model] = (names, json)
    return shape


def _key(model: type, ident: Any) -> tuple:
    """The identity-map key of a primary key value (a tuple for a composite key), by the mapper's public
    method: sqlalchemy.orm.util.identity_key parses its several call forms first, which cost more than
    the lookup it serves."""
    return model.__mapper__.identity_key_from_primary_key(ident if isinstance(ident, tuple) else (ident,))


def get(session: Session, model: type, ident: Any):
    """session.get(model, ident), answered from the memo while the app DB is unchanged."""
    held = session.identity_map.get(_key(model, ident))
    if held is not None or not memo.usable(session):
        return held if held is not None else session.get(model, ident)
    columns = memo.get_or_compute(session, ("row", model.__tablename__, ident), lambda: values(session, model, ident))
    return None if columns is None else attach(session, model, columns)


def values(session: Session, model: type, ident: Any) -> tuple[dict, dict] | None:
    """What the memo keeps of the row: (column values, JSON values as orjson text), or None when there
    is no such row. Decoding the text per request is cheaper than deep-copying the values."""
    row = session.get(model, ident)
    return None if row is None else snapshot(row)


def snapshot(instance) -> tuple[dict, dict]:
    """An instance's stored form (see values)."""
    names, json = _shape(type(instance))
    columns = {name: getattr(instance, name) for name in names}
    encoded = {}
    for name in json:
        value = columns[name]
        if value is not None:
            try:
                text = orjson.dumps(value)
            except TypeError:  # integers beyond 64 bits: deep-copied instead
                continue
            if orjson.loads(text) != value:  # NaN, which orjson writes as null: deep-copied instead
                continue
            encoded[name] = text
            del columns[name]
    return columns, encoded


def attach(session: Session, model: type, stored: tuple[dict, dict]):
    """The session's instance of this row: the one it holds already, or a clean persistent one made
    from the stored values without SQL."""
    columns, encoded = stored
    names, json = _shape(model)
    key = _key(model, columns[model.__mapper__.primary_key[0].key])
    held = session.identity_map.get(key)
    if held is not None:
        return held
    instance = model.__mapper__.class_manager.new_instance()
    # As a query loads a row: values put in the instance's dict are its committed state (no history).
    state = instance.__dict__
    state.update(columns)
    for name in json:  # copies: the memo's values are shared between requests and threads
        if name in encoded:
            state[name] = orjson.loads(encoded[name])
        elif state.get(name) is not None:
            state[name] = copy.deepcopy(state[name])
    _detach(key, instance)
    _add(session, instance)
    return instance


def _detach(key: tuple, instance) -> None:
    """make_transient_to_detached with the identity key already known and without its last step, which
    marks every attribute not in the dict as expired: here those are only relationships, which load on
    first use anyway, and the marking cost more than the rest of the attach."""
    state = instance_state(instance)
    state.key = key
    state._commit_all(state.dict)


def _add(session: Session, instance) -> None:
    """session.add for a detached instance with nothing loaded beyond its columns: the identity map
    takes it directly (what add does after walking the save-update cascade, which has nothing to walk
    here and cost more than the rest of the attach). While nobody listens to the session's attach
    events, without beginning the session's transaction either (add begins one): a request answered
    from the memo then runs no statement, and its session closes without a transaction to end. The
    next statement begins it as usual, and a rollback expires the instance as it expires any other."""
    state = instance_state(instance)
    dispatch = session.dispatch
    if dispatch.before_attach or dispatch.after_attach or dispatch.detached_to_persistent:
        session.add(instance)
        return
    try:
        session.identity_map.add(state)
        state.session_id = session.hash_key
    except AttributeError:  # another SQLAlchemy's internals: the public way
        session.add(instance)
