"""Cell values of downloads as Metabase writes them: column titles, unformatted (ISO-8601, raw
numbers) or formatted ("January 5, 2024, 1:45 PM", "1,234.57") per `format_rows` (temporal
patterns in core.export.dates)."""
from __future__ import annotations

import datetime as dt
import decimal
import uuid
from typing import Any, Callable

from .dates import temporal_formatter

CURRENCY_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}
IDENTIFIER_TYPES = ("type/PK", "type/FK")


def column_settings(viz: dict | None, column: dict) -> dict:
    """The per-column visualization settings for `column` (keyed by name or by field ref)."""
    settings = (viz or {}).get("column_settings") or {}
    name_key = '["name",' + _json(column.get("name")) + "]"
    ref = column.get("field_ref")
    ref_key = '["ref",' + _json(ref) + "]" if ref is not None else None
    found: dict = {}
    for key in (ref_key, name_key):
        if key and key in settings and isinstance(settings[key], dict):
            found = {**settings[key], **found}
    return found


def _json(value: Any) -> str:
    import orjson

    return orjson.dumps(value).decode()


def titles(columns: list[dict], viz: dict | None = None, format_rows: bool = False) -> list[str]:
    out = []
    for column in columns:
        title = None
        if format_rows:
            settings = column_settings(viz, column)
            title = settings.get("column_title")
            currency = settings.get("currency")
            if title is None and settings.get("number_style") == "currency" and currency:
                title = f"{column.get('display_name') or column.get('name')} ({CURRENCY_SYMBOLS.get(currency, currency)})"
        out.append(title or column.get("display_name") or column.get("name") or "")
    return out


# ---- unformatted --------------------------------------------------------------------------------


TEMPORAL_TYPES = frozenset({"type/Date", "type/DateTime", "type/DateTimeWithTZ", "type/DateTimeWithLocalTZ",
                            "type/DateTimeWithZoneOffset", "type/DateTimeWithZoneID", "type/Instant"})


MIDNIGHT = frozenset({"00:00:00", "00:00:00.000", "00:00:00.000000"})


def is_temporal(column: dict) -> bool:
    return (column.get("effective_type") or column.get("base_type")) in TEMPORAL_TYPES


def text_datetime(value: str) -> str:
    """A datetime an engine keeps as text ("2024-01-05 13:45:00", SQLite) written as the unformatted
    ISO-8601 the other engines' values get: "2024-01-05T13:45:00", or "2024-01-05" at midnight."""
    if len(value) >= 19 and value[10] == " ":
        if value[11:] in MIDNIGHT:
            return value[:10]
        return value[:10] + "T" + value[11:]
    return value


def plain(value: Any) -> Any:
    """The unformatted cell: dates ISO-8601 (a datetime at midnight as its date), numbers raw."""
    if isinstance(value, dt.datetime):
        if value.hour == value.minute == value.second == value.microsecond == 0 and value.tzinfo is None:
            return value.date().isoformat()
        return value.isoformat()
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    return value


# ---- formatted ----------------------------------------------------------------------------------


def _format_number(value: Any, column: dict, settings: dict) -> str:
    if column.get("semantic_type") in IDENTIFIER_TYPES:
        return str(value)
    decimals = settings.get("decimals")
    if isinstance(value, int) and not isinstance(value, bool):
        text = f"{value:,}" if decimals is None else f"{value:,.{decimals}f}"
    else:
        number = float(value)
        if number != number or number in (float("inf"), float("-inf")):
            return str(number)
        if decimals is not None:
            text = f"{number:,.{decimals}f}"
        elif number == int(number) and abs(number) < 1e15:
            text = f"{int(number):,}"
        else:
            text = f"{number:,.2f}".rstrip("0").rstrip(".")
    if settings.get("number_style") == "percent":
        return text + "%"
    if settings.get("number_style") == "currency" and settings.get("currency_in_header", True) is False:
        return CURRENCY_SYMBOLS.get(settings.get("currency"), "") + text
    return text


def formatter(column: dict, viz: dict | None, format_rows: bool) -> Callable[[Any], Any]:
    """The function that writes one column's cells."""
    temporal = is_temporal(column)
    if not format_rows:
        if temporal:
            return lambda value: text_datetime(value) if type(value) is str else plain(value)
        return plain
    settings = {**(column.get("settings") or {}), **column_settings(viz, column)}
    temporal_text = temporal_formatter(column, settings)

    def fmt(value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (dt.date, dt.time)):
            return temporal_text(value)
        if isinstance(value, (int, float, decimal.Decimal)):
            return _format_number(value, column, settings)
        if temporal and type(value) is str:
            try:
                parsed = dt.datetime.fromisoformat(value)
            except ValueError:
                return value
            return temporal_text(parsed.date() if len(value) == 10 else parsed)
        return plain(value)

    return fmt
