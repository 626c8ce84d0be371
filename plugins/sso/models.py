"""The sso plugin's own table: the single-sign-on tokens already used, remembered until they expire.

Kept in the app DB (not in process memory) so a token replayed to another worker or instance is
refused too; the primary key makes two concurrent uses of one token a unique-key conflict, one winner.
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from core.appdb.models import Base, UTCDateTime


class UsedSsoToken(Base):
    __tablename__ = "sso_used_token"

    # SHA-256 of the token's `jti` when it has one, else of the whole token.
    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    expires_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, index=True)
