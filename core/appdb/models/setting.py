"""Stored setting values. Definitions (defaults, visibility, validation) live in the plugins that own them."""
from __future__ import annotations

from sqlalchemy import String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base


class Setting(Base):
    __tablename__ = "setting"

    key: Mapped[str] = mapped_column(String(254), primary_key=True)
    # JSON text of the value, so that every setting type round-trips through one column.
    value: Mapped[str] = mapped_column(Text)
