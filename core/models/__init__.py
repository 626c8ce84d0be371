"""App-DB ORM models, one module per family. Import models from here."""
from .base import Base, UTCDateTime, utcnow
from .collection import Collection
from .database import Database, Dimension, Field, FieldValues, Table
from .query import NativeQuerySnippet, Query, QueryCache, QueryExecution
from .setting import Setting
from .user import (
    ADMIN_GROUP_ID,
    ALL_USERS_GROUP_ID,
    LoginSession,
    PermissionsGroup,
    PermissionsGroupMembership,
    User,
)

__all__ = [
    "ADMIN_GROUP_ID",
    "ALL_USERS_GROUP_ID",
    "Base",
    "Collection",
    "Database",
    "Dimension",
    "Field",
    "FieldValues",
    "LoginSession",
    "NativeQuerySnippet",
    "PermissionsGroup",
    "PermissionsGroupMembership",
    "Query",
    "QueryCache",
    "QueryExecution",
    "Setting",
    "Table",
    "User",
    "UTCDateTime",
    "utcnow",
]
