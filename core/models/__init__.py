"""App-DB ORM models, one module per family. Import models from here."""
from .base import Base, UTCDateTime, utcnow
from .card import CARD_TYPES, Card, PersistedInfo, Revision
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
    "CARD_TYPES",
    "Card",
    "Collection",
    "Database",
    "Dimension",
    "Field",
    "FieldValues",
    "LoginSession",
    "NativeQuerySnippet",
    "PersistedInfo",
    "PermissionsGroup",
    "PermissionsGroupMembership",
    "Query",
    "QueryCache",
    "QueryExecution",
    "Revision",
    "Setting",
    "Table",
    "User",
    "UTCDateTime",
    "utcnow",
]
