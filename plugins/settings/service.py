"""Settings plugin logic: listing and changing settings, and the validators of the settings it owns."""
from __future__ import annotations

import datetime as dt
import re
from typing import Any
from urllib.parse import urlparse

from sqlalchemy.orm import Session

from core.assembly.settings import SettingsRegistry
from core.http.errors import Invalid

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
LOCALE_RE = re.compile(r"^[a-z]{2}(_[A-Za-z]{2})?$")


def list_settings(session: Session, registry: SettingsRegistry) -> list[dict]:
    return [registry.describe(session, d) for d in sorted(registry.readable("admin"), key=lambda d: d.key)]


def update_many(session: Session, registry: SettingsRegistry, values: dict[str, Any]) -> None:
    """Change several settings in one transaction: all of them, or none when one is refused."""
    for key, value in values.items():
        registry.set(session, key, value)
    session.commit()


def valid_site_url(value: str) -> str:
    value = value.strip().rstrip("/")
    if "://" not in value:
        value = "http://" + value
    parsed = urlparse(value)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise Invalid({"value": "Invalid site URL: it must be an http or https URL."})
    return value


def valid_locale(value: str) -> str:
    if not LOCALE_RE.match(value):
        raise Invalid({"value": "Invalid locale: use a two-letter language code, optionally with a country."})
    return value


def valid_weekday(value: str) -> str:
    if value.lower() not in WEEKDAYS:
        raise Invalid({"value": f"Invalid day: use one of {', '.join(WEEKDAYS)}."})
    return value.lower()


def report_timezone_short(session: Session) -> str:
    from flask import current_app

    name = current_app.extensions["tessera"].settings.get(session, "report-timezone")
    if not name:
        return "UTC"
    try:
        from zoneinfo import ZoneInfo

        return dt.datetime.now(ZoneInfo(name)).tzname() or name
    except Exception:  # an unknown zone name: show it as stored
        return name
