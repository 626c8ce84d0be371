"""App-DB ORM models, one module per family. Import models from here."""
from .api_key import ApiKey
from .base import Base, UTCDateTime, utcnow
from .bookmark import BookmarkOrdering, CardBookmark, CollectionBookmark
from .card import CARD_TYPES, Card, PersistedInfo, Revision
from .change import AppDbChange
from .collection import Collection
from .database import Database, Dimension, Field, FieldValues, Table
from .permissions import CollectionPermission, DataPermission, PermissionsGraphRevision, PermissionsRevision
from .query import NativeQuerySnippet, Query, QueryCache, QueryExecution
from .schedule import ScheduledJob, TaskHistory
from .search import SearchIndex
from .segment import LegacyMetric, MetricImportantField, Segment
from .setting import Setting
from .throttle import ThrottleAttempt, ThrottleGuard
from .timeline import Timeline, TimelineEvent
from .user import (
    ADMIN_GROUP_ID,
    ALL_USERS_GROUP_ID,
    LoginSession,
    PermissionsGroup,
    PermissionsGroupMembership,
    User,
)

__all__ = [
    "AppDbChange",
    "SearchIndex",
    "ApiKey",
    "CollectionPermission",
    "DataPermission",
    "PermissionsGraphRevision",
    "PermissionsRevision",
    "ADMIN_GROUP_ID",
    "ALL_USERS_GROUP_ID",
    "Base",
    "BookmarkOrdering",
    "CardBookmark",
    "CollectionBookmark",
    "CARD_TYPES",
    "Card",
    "Collection",
    "Database",
    "Dimension",
    "Field",
    "FieldValues",
    "LegacyMetric",
    "LoginSession",
    "MetricImportantField",
    "NativeQuerySnippet",
    "PersistedInfo",
    "PermissionsGroup",
    "PermissionsGroupMembership",
    "Query",
    "QueryCache",
    "QueryExecution",
    "Revision",
    "ScheduledJob",
    "Segment",
    "Setting",
    "Table",
    "TaskHistory",
    "ThrottleAttempt",
    "ThrottleGuard",
    "Timeline",
    "TimelineEvent",
    "User",
    "UTCDateTime",
    "utcnow",
]
