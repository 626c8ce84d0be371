"""Login-throttling state shared by every worker and instance: recorded attempts and the row that serialises them."""
from __future__ import annotations

from sqlalchemy import BigInteger, Double, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base


class ThrottleAttempt(Base):
    """One counted attempt of a throttler's key (a failed login, a password-reset request)."""

    __tablename__ = "throttle_attempt"
    __table_args__ = (Index("ix_throttle_attempt_throttler_key_attempted_at", "throttler", "key", "attempted_at"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    throttler: Mapped[str] = mapped_column(String(64))
    # SHA-256 of the key (an e-mail address, an IP): bounded length, and the table names nobody.
    key: Mapped[str] = mapped_column(String(64))
    # Seconds since the epoch from the throttler's clock (wall time, the same in every process).
    attempted_at: Mapped[float] = mapped_column(Double)


class ThrottleGuard(Base):
    """The one row every throttling transaction updates first, so that check-and-record runs one at a time
    across processes (a row lock on PostgreSQL, the write lock on SQLite)."""

    __tablename__ = "throttle_guard"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    writes: Mapped[int] = mapped_column(BigInteger, default=0)
