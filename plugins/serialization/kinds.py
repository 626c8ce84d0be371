"""What of each app-DB row a serialized file holds, and the way back: the columns written (ids,
timestamps, counters and sharing tokens left out), the columns that are references and to what, and
the conversion of one row to a document and of a document to column values."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import sqlalchemy as sa

from core.appdb.models import Base

from .refs import Rewriter

# Never written: local ids, times, counters, public links and archive bookkeeping differ between servers.
ALWAYS_SKIP = frozenset({"id", "entity_id", "created_at", "updated_at", "view_count", "last_used_at",
                         "last_viewed_at", "cache_invalidated_at", "public_uuid", "made_public_by_id",
                         "initially_published_at", "archive_operation_id", "last_analyzed"})

# Columns that are references, by name, wherever they appear.
COLUMN_REFS = {"collection_id": "collection", "creator_id": "user", "database_id": "database", "db_id": "database",
               "table_id": "table", "source_card_id": "card", "model_id": "card", "card_id": "card",
               "action_id": "action", "dashboard_tab_id": "dashboard_tab", "fk_target_field_id": "field",
               "human_readable_field_id": "field", "field_id": "field"}


@dataclass(frozen=True)
class Kind:
    model: str                       # the serdes/meta model name (Metabase's)
    table: str
    skip: frozenset = frozenset()    # columns besides ALWAYS_SKIP left out of the file
    only: frozenset | None = None    # when set, the only columns written
    editable: frozenset | None = None  # when set, the only columns an import writes (the rest come from sync)
    ref: str | None = None           # the reference kind of the entity itself (entity_id kinds)
    folder: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def columns(self) -> list[sa.Column]:
        table = Base.metadata.tables.get(self.table)
        if table is None:
            return []
        return [c for c in table.columns if c.name not in ALWAYS_SKIP and c.name not in self.skip
                and (self.only is None or c.name in self.only)]

    @property
    def present(self) -> bool:
        return self.table in Base.metadata.tables


_FIELD_EDITABLE = frozenset({"display_name", "description", "semantic_type", "coercion_strategy", "fk_target_field_id",
                             "visibility_type", "has_field_values", "settings", "caveats", "points_of_interest",
                             "custom_position", "json_unfolding", "preview_display"})
_TABLE_EDITABLE = frozenset({"display_name", "description", "entity_type", "visibility_type", "field_order",
                             "caveats", "points_of_interest", "show_in_getting_started"})
_DATABASE_EDITABLE = frozenset({"description", "settings", "caveats", "points_of_interest", "is_full_sync",
                                "is_on_demand", "auto_run_queries", "refingerprint", "cache_ttl",
                                "metadata_sync_schedule", "cache_field_values_schedule", "uploads_enabled",
                                "uploads_schema_name", "uploads_table_prefix"})

COLLECTION = Kind("Collection", "collection", skip=frozenset({"location", "personal_owner_id"}), ref="collection")
CARD = Kind("Card", "report_card", ref="card", folder="cards")
DASHBOARD = Kind("Dashboard", "report_dashboard", ref="dashboard", folder="dashboards")
TAB = Kind("DashboardTab", "dashboard_tab", skip=frozenset({"dashboard_id"}), ref="dashboard_tab")
DASHCARD = Kind("DashboardCard", "report_dashboardcard", skip=frozenset({"dashboard_id"}))
TIMELINE = Kind("Timeline", "timeline", ref="timeline", folder="timelines")
EVENT = Kind("TimelineEvent", "timeline_event", skip=frozenset({"timeline_id"}))
SNIPPET = Kind("NativeQuerySnippet", "native_query_snippet", ref="snippet", folder="snippets")
ACTION = Kind("Action", "action", ref="action", folder="actions")
ACTION_PARTS = {"query": Kind("QueryAction", "query_action", skip=frozenset({"action_id"})),
                "http": Kind("HTTPAction", "http_action", skip=frozenset({"action_id"})),
                "implicit": Kind("ImplicitAction", "implicit_action", skip=frozenset({"action_id"}))}
SEGMENT = Kind("Segment", "segment", ref="segment", folder="segments")
LEGACY_METRIC = Kind("LegacyMetric", "metric", ref="metric", folder="metrics")
DATABASE = Kind("Database", "metabase_database", only=_DATABASE_EDITABLE | {"name", "engine", "is_sample"},
                editable=_DATABASE_EDITABLE)
TABLE = Kind("Table", "metabase_table", only=_TABLE_EDITABLE | {"name", "schema", "active"}, editable=_TABLE_EDITABLE)
FIELD = Kind("Field", "metabase_field", only=_FIELD_EDITABLE | {"name", "base_type", "effective_type",
                                                                 "database_type", "active"},
             editable=_FIELD_EDITABLE)
DIMENSION = Kind("Dimension", "dimension", only=frozenset({"name", "type", "human_readable_field_id"}))
FIELD_VALUES = Kind("FieldValues", "metabase_fieldvalues", only=frozenset({"values", "human_readable_values",
                                                                          "has_more_values"}))

TOP_KINDS = {k.model: k for k in (COLLECTION, CARD, DASHBOARD, TIMELINE, SNIPPET, ACTION, SEGMENT, LEGACY_METRIC,
                                  DATABASE, TABLE, FIELD, FIELD_VALUES)}


def to_document(kind: Kind, row, rewriter: Rewriter) -> dict:
    """The file's keys for one row (references made portable)."""
    out = {}
    for column in kind.columns:
        value = row._mapping[column.name] if hasattr(row, "_mapping") else row[column.name]
        ref = COLUMN_REFS.get(column.name)
        if ref:
            value = rewriter.refs.to_portable(ref, value)
        elif isinstance(column.type, sa.JSON):
            value = rewriter.walk(value, metadata=column.name == "result_metadata")
        elif isinstance(value, dt.datetime):
            value = value.astimezone(dt.timezone.utc).isoformat()
        out[column.name] = value
    return out


def to_values(kind: Kind, document: dict, rewriter: Rewriter, acting_user: int) -> dict:
    """Column values from a file's keys (references resolved here); keys the file lacks are left out, and
    so are the columns an import never writes."""
    values = {}
    for column in kind.columns:
        name = column.name
        if name not in document or (kind.editable is not None and name not in kind.editable):
            continue
        value = document[name]
        ref = COLUMN_REFS.get(name)
        if ref == "user":
            # Content keeps its author where the same person has an account here; else the importer owns it.
            value = rewriter.refs.to_local("user", value, strict=False) or acting_user
        elif ref:
            value = rewriter.refs.to_local(ref, value, strict=rewriter.strict)
        elif isinstance(column.type, sa.JSON):
            value = rewriter.walk(value, metadata=name == "result_metadata")
        elif value is not None and isinstance(column.type, (sa.DateTime,)) or (
                value is not None and getattr(column.type, "impl", None) is not None
                and isinstance(column.type.impl, sa.DateTime)):
            value = dt.datetime.fromisoformat(value) if isinstance(value, str) else value
        values[name] = value
    return values
