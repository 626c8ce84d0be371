"""The sandboxes table (Metabase's `sandboxes`, formerly group_table_access_policy): one row per group
and table that the group reads only in part, either filtered by user attributes or replaced by a saved
question (`card_id`), its `attribute_remappings` mapping attribute names to a dimension (a field of
the table or a column of the question) or a variable (a template tag of a native question).
"""
from __future__ import annotations

from sqlalchemy import ForeignKey, Integer, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from core.appdb.models import Base


class Sandbox(Base):
    __tablename__ = "sandboxes"
    __table_args__ = (UniqueConstraint("table_id", "group_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    group_id: Mapped[int] = mapped_column(ForeignKey("permissions_group.id", ondelete="CASCADE"), index=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("metabase_table.id", ondelete="CASCADE"), index=True)
    card_id: Mapped[int | None] = mapped_column(ForeignKey("report_card.id", ondelete="CASCADE"), index=True)
    attribute_remappings: Mapped[dict] = mapped_column(default=dict)
