"""The action tables, named and shaped as Metabase's: `action` (what every kind shares, with the public
link columns) and one table per kind keyed by the action's id: `query_action` (a native write query on a
database), `http_action` (a request template and its jq handles) and `implicit_action` (row/create,
row/update, row/delete on the model's table). The migration is this plugin's own."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from core.appdb.models import Base, UTCDateTime, utcnow
from core.appdb.models.base import new_entity_id

KINDS = ("query", "http", "implicit")


class Action(Base):
    __tablename__ = "action"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    type: Mapped[str] = mapped_column(String(32))
    model_id: Mapped[int] = mapped_column(ForeignKey("report_card.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(254))
    description: Mapped[str | None] = mapped_column(Text)
    parameters: Mapped[list] = mapped_column(default=list)
    parameter_mappings: Mapped[dict | None] = mapped_column(default=None)
    visualization_settings: Mapped[dict] = mapped_column(default=dict)
    public_uuid: Mapped[str | None] = mapped_column(String(36), unique=True)
    made_public_by_id: Mapped[int | None] = mapped_column(ForeignKey("core_user.id", ondelete="SET NULL"))
    # core.policy.sharing.publish stamps it, as it does for cards and dashboards.
    initially_published_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    creator_id: Mapped[int | None] = mapped_column(ForeignKey("core_user.id", ondelete="SET NULL"))
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    entity_id: Mapped[str | None] = mapped_column(String(21), unique=True, default=new_entity_id)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class QueryAction(Base):
    __tablename__ = "query_action"

    action_id: Mapped[int] = mapped_column(ForeignKey("action.id", ondelete="CASCADE"), primary_key=True)
    database_id: Mapped[int] = mapped_column(ForeignKey("metabase_database.id", ondelete="CASCADE"), index=True)
    dataset_query: Mapped[dict] = mapped_column(default=dict)


class HttpAction(Base):
    __tablename__ = "http_action"

    action_id: Mapped[int] = mapped_column(ForeignKey("action.id", ondelete="CASCADE"), primary_key=True)
    template: Mapped[dict] = mapped_column(default=dict)
    response_handle: Mapped[str | None] = mapped_column(Text)
    error_handle: Mapped[str | None] = mapped_column(Text)


class ImplicitAction(Base):
    __tablename__ = "implicit_action"

    action_id: Mapped[int] = mapped_column(ForeignKey("action.id", ondelete="CASCADE"), primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))


DETAIL_TABLES = {"query": QueryAction, "http": HttpAction, "implicit": ImplicitAction}
