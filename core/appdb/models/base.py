"""The declarative base and the column types every app-DB model shares."""
from __future__ import annotations

import datetime as dt
import secrets

from sqlalchemy import JSON, DateTime, MetaData, TypeDecorator
from sqlalchemy.orm import DeclarativeBase

from .. import changes
from ..db import backend_of

# Named constraints keep Alembic migrations identical on SQLite and PostgreSQL.
NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {dict: JSON, list: JSON}


changes.describe(Base.metadata)  # the change counters classify statements by these tables


class UTCDateTime(TypeDecorator):
    """Timestamps stored as UTC and always read back timezone-aware, on SQLite as on PostgreSQL."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        value = value.astimezone(dt.timezone.utc)
        return value.replace(tzinfo=None) if backend_of(dialect.name).naive_timestamps else value

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=dt.timezone.utc)
        return value.astimezone(dt.timezone.utc)


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


_NANOID_ALPHABET = "_-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def new_entity_id() -> str:
    """A 21-character NanoID, the format of Metabase's entity ids."""
    return "".join(secrets.choice(_NANOID_ALPHABET) for _ in range(21))
