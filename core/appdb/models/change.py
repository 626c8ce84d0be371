"""The app DB's per-table change counters (core.appdb.changes writes and reads them on the DBAPI
cursor; the model is here so that migrations match the models)."""
from __future__ import annotations

from sqlalchemy import BigInteger, String
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base


class AppDbChange(Base):
    """How many committed transactions wrote a table (or a named part of one: `report_card#counts`)."""

    __tablename__ = "appdb_change"

    table_name: Mapped[str] = mapped_column(String(254), primary_key=True)
    counter: Mapped[int] = mapped_column(BigInteger)
