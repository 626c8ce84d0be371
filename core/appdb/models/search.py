"""The search index's rows: the searchable text of each object, written by triggers on the content
tables (core.appdb.search_index), never by the application."""
from __future__ import annotations

from sqlalchemy import Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base


class SearchIndex(Base):
    __tablename__ = "search_index"
    __table_args__ = (UniqueConstraint("model", "model_id", name="uq_search_index_model"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model: Mapped[str] = mapped_column(String(32))  # "card", "dashboard", "table"... (search's model names)
    model_id: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)  # each searchable column lowered, joined by newlines
