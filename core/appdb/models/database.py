"""The data model: registered databases, their tables and fields, stored field values and dimensions.

Column names follow Metabase's so that API shapes map one to one. `Database.details` holds the
connection details encrypted (core.driver.crypto); never read it directly, ask the databases service.
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from .base import Base, UTCDateTime, new_entity_id, utcnow


class Database(Base):
    __tablename__ = "metabase_database"
    __entity_type__ = "database"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(254))
    description: Mapped[str | None] = mapped_column(Text)
    engine: Mapped[str] = mapped_column(String(254))
    # Encrypted JSON of the connection details (core.driver.crypto).
    details: Mapped[str] = mapped_column(Text, default="")
    is_sample: Mapped[bool] = mapped_column(Boolean, default=False)
    is_full_sync: Mapped[bool] = mapped_column(Boolean, default=True)
    is_on_demand: Mapped[bool] = mapped_column(Boolean, default=False)
    is_audit: Mapped[bool] = mapped_column(Boolean, default=False)
    auto_run_queries: Mapped[bool] = mapped_column(Boolean, default=True)
    refingerprint: Mapped[bool | None] = mapped_column(Boolean)
    cache_ttl: Mapped[int | None] = mapped_column(Integer)
    timezone: Mapped[str | None] = mapped_column(String(254))
    caveats: Mapped[str | None] = mapped_column(Text)
    points_of_interest: Mapped[str | None] = mapped_column(Text)
    settings: Mapped[dict | None] = mapped_column(default=None)
    dbms_version: Mapped[dict | None] = mapped_column(default=None)
    metadata_sync_schedule: Mapped[str] = mapped_column(String(254), default="0 50 * * * ? *")
    cache_field_values_schedule: Mapped[str] = mapped_column(String(254), default="0 50 0 * * ? *")
    initial_sync_status: Mapped[str] = mapped_column(String(32), default="incomplete")
    sync_error: Mapped[str | None] = mapped_column(Text)
    uploads_enabled: Mapped[bool] = mapped_column(Boolean, default=False)
    uploads_schema_name: Mapped[str | None] = mapped_column(Text)
    uploads_table_prefix: Mapped[str | None] = mapped_column(Text)
    creator_id: Mapped[int | None] = mapped_column(ForeignKey("core_user.id", ondelete="SET NULL"))
    entity_id: Mapped[str | None] = mapped_column(String(21), unique=True, default=new_entity_id)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)

    tables: Mapped[list["Table"]] = relationship(back_populates="db", cascade="all, delete-orphan",
                                                 passive_deletes=True)


class Table(Base):
    __tablename__ = "metabase_table"
    __entity_type__ = "table"
    __table_args__ = (UniqueConstraint("db_id", "schema", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    db_id: Mapped[int] = mapped_column(ForeignKey("metabase_database.id", ondelete="CASCADE"), index=True)
    schema: Mapped[str | None] = mapped_column(String(254))
    name: Mapped[str] = mapped_column(String(254))
    display_name: Mapped[str | None] = mapped_column(String(254))
    description: Mapped[str | None] = mapped_column(Text)
    entity_type: Mapped[str | None] = mapped_column(String(254))
    visibility_type: Mapped[str | None] = mapped_column(String(254))
    field_order: Mapped[str] = mapped_column(String(254), default="database")
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    show_in_getting_started: Mapped[bool] = mapped_column(Boolean, default=False)
    caveats: Mapped[str | None] = mapped_column(Text)
    points_of_interest: Mapped[str | None] = mapped_column(Text)
    initial_sync_status: Mapped[str] = mapped_column(String(32), default="incomplete")
    estimated_row_count: Mapped[int | None] = mapped_column(Integer)
    is_upload: Mapped[bool] = mapped_column(Boolean, default=False)
    database_require_filter: Mapped[bool | None] = mapped_column(Boolean)
    entity_id: Mapped[str | None] = mapped_column(String(21), unique=True, default=new_entity_id)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)

    db: Mapped[Database] = relationship(back_populates="tables")
    fields: Mapped[list["Field"]] = relationship(back_populates="table", cascade="all, delete-orphan",
                                                 passive_deletes=True, foreign_keys="Field.table_id")


class Field(Base):
    __tablename__ = "metabase_field"
    __entity_type__ = "field"
    __table_args__ = (UniqueConstraint("table_id", "parent_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("metabase_table.id", ondelete="CASCADE"), index=True)
    parent_id: Mapped[int | None] = mapped_column(ForeignKey("metabase_field.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(254))
    display_name: Mapped[str | None] = mapped_column(String(254))
    description: Mapped[str | None] = mapped_column(Text)
    database_type: Mapped[str] = mapped_column(Text, default="")
    base_type: Mapped[str] = mapped_column(String(255), default="type/*")
    effective_type: Mapped[str | None] = mapped_column(String(255))
    semantic_type: Mapped[str | None] = mapped_column(String(255))
    coercion_strategy: Mapped[str | None] = mapped_column(String(255))
    fk_target_field_id: Mapped[int | None] = mapped_column(ForeignKey("metabase_field.id", ondelete="SET NULL"))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    visibility_type: Mapped[str] = mapped_column(String(32), default="normal")
    has_field_values: Mapped[str | None] = mapped_column(String(32))
    position: Mapped[int] = mapped_column(Integer, default=0)
    database_position: Mapped[int] = mapped_column(Integer, default=0)
    custom_position: Mapped[int] = mapped_column(Integer, default=0)
    database_is_auto_increment: Mapped[bool] = mapped_column(Boolean, default=False)
    database_required: Mapped[bool] = mapped_column(Boolean, default=False)
    database_indexed: Mapped[bool | None] = mapped_column(Boolean)
    json_unfolding: Mapped[bool] = mapped_column(Boolean, default=False)
    nfc_path: Mapped[list | None] = mapped_column(default=None)
    settings: Mapped[dict | None] = mapped_column(default=None)
    fingerprint: Mapped[dict | None] = mapped_column(default=None)
    fingerprint_version: Mapped[int] = mapped_column(Integer, default=0)
    last_analyzed: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    caveats: Mapped[str | None] = mapped_column(Text)
    points_of_interest: Mapped[str | None] = mapped_column(Text)
    preview_display: Mapped[bool] = mapped_column(Boolean, default=True)
    entity_id: Mapped[str | None] = mapped_column(String(21), unique=True, default=new_entity_id)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)

    table: Mapped[Table] = relationship(back_populates="fields", foreign_keys=[table_id])
    fk_target: Mapped["Field | None"] = relationship(remote_side=[id], foreign_keys=[fk_target_field_id])


class FieldValues(Base):
    """Distinct values of a list field (type "full"), with optional human-readable remapping."""

    __tablename__ = "metabase_fieldvalues"
    __table_args__ = (UniqueConstraint("field_id", "type", "hash_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    field_id: Mapped[int] = mapped_column(ForeignKey("metabase_field.id", ondelete="CASCADE"), index=True)
    type: Mapped[str] = mapped_column(String(32), default="full")
    hash_key: Mapped[str] = mapped_column(String(255), default="")
    values: Mapped[list | None] = mapped_column(default=None)
    human_readable_values: Mapped[list | None] = mapped_column(default=None)
    has_more_values: Mapped[bool] = mapped_column(Boolean, default=False)
    last_used_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class Dimension(Base):
    """A field's remapping: internal (its own values renamed) or external (shown as another field)."""

    __tablename__ = "dimension"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    field_id: Mapped[int] = mapped_column(ForeignKey("metabase_field.id", ondelete="CASCADE"), unique=True)
    name: Mapped[str] = mapped_column(String(254))
    type: Mapped[str] = mapped_column(String(32))
    human_readable_field_id: Mapped[int | None] = mapped_column(ForeignKey("metabase_field.id", ondelete="CASCADE"))
    entity_id: Mapped[str | None] = mapped_column(String(21), unique=True, default=new_entity_id)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


