"""How a chart writes a value: numbers from the column's `column_settings` (number_style decimal,
percent, scientific or currency with currency_style, decimals, scale, prefix/suffix, number_separators,
compact "1.2k") and dates by the column's temporal unit ("January, 2024" for a month bucket; the
patterns and date_style/time settings are core.export.dates', the same as formatted downloads).

The same settings also give Vega-Lite axis formats (`axis_format`), so axis labels and data labels read
alike. Metabase's frontend rules are followed, not the backend export's: percent multiplies by 100.
"""
from __future__ import annotations

import datetime as dt
import decimal
import math
from typing import Any, Callable

from core.export.dates import temporal_formatter
from core.export.formatting import column_settings, is_temporal

CURRENCIES = {"USD": ("$", "US dollars"), "EUR": ("€", "euros"), "GBP": ("£", "British pounds"),
              "JPY": ("¥", "Japanese yen"), "CAD": ("CA$", "Canadian dollars"), "AUD": ("A$", "Australian dollars"),
              "CHF": ("CHF", "Swiss francs"), "CNY": ("CN¥", "Chinese yuan"), "INR": ("₹", "Indian rupees"),
              "BRL": ("R$", "Brazilian reals")}
NUMERIC_TYPES = ("type/Number", "type/Integer", "type/BigInteger", "type/Float", "type/Decimal", "type/Currency",
                 "type/Percentage")
IDENTIFIERS = ("type/PK", "type/FK")
# Extraction units give integers that read as names (Metabase formats them so on axes and in tables).
DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
COMPACT = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k"))
# d3 time formats of a temporal axis by the column's unit (labels stay short; tooltips are not drawn).
AXIS_TIME = {"year": "%Y", "quarter": "Q%q %Y", "month": "%B %Y", "week": "%b %-d, %Y", "day": "%b %-d, %Y",
             "hour": "%b %-d, %-I %p", "minute": "%-I:%M %p"}


def is_number(column: dict) -> bool:
    kind = column.get("effective_type") or column.get("base_type") or ""
    return kind in NUMERIC_TYPES and column.get("semantic_type") not in IDENTIFIERS \
        and not str(column.get("unit") or "").endswith(("-of-week", "-of-year", "-of-day", "-of-month",
                                                       "-of-quarter"))


def settings_of(column: dict, viz: dict | None) -> dict:
    """The column's effective settings: its own `settings` under the card's `column_settings` entry."""
    return {**(column.get("settings") or {}), **column_settings(viz, column)}


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (int, float)):
        return value
    return None


def _rounded(number: float, decimals: int) -> decimal.Decimal:
    """`number` to `decimals` places, halves away from zero as the browser's Intl does (1.125 -> 1.13;
    Python's own formatting would give 1.12)."""
    return decimal.Decimal(repr(number)).quantize(decimal.Decimal(1).scaleb(-decimals), decimal.ROUND_HALF_UP)


def _grouped(number: float, decimals: int | None, separators: str, grouping: bool = True) -> str:
    if decimals is None:
        text = f"{_rounded(number, 2):,.2f}".rstrip("0").rstrip(".") if number != int(number) \
            else f"{int(number):,}"
    else:
        text = f"{_rounded(number, decimals):,.{decimals}f}"
    if not grouping:
        text = text.replace(",", "")
    if separators != ".,":
        point, group = (separators + " ")[:2] if separators else (".", ",")
        text = text.replace(",", "\0").replace(".", point).replace("\0", group.strip() if group != " " else " ")
    return text


def compact_number(number: float, settings: dict | None = None) -> str:
    """1234 -> "1.2k", 1500000 -> "1.5M" (Metabase's compact form: one decimal, k/M/B/T)."""
    settings = settings or {}
    style = settings.get("number_style")
    scaled = number * (settings.get("scale") or 1) * (100 if style == "percent" else 1)
    magnitude = abs(scaled)
    for limit, suffix in COMPACT:
        if magnitude >= limit:
            text = f"{scaled / limit:.1f}".rstrip("0").rstrip(".") + suffix
            break
    else:
        text = _grouped(scaled, None if magnitude >= 1 or magnitude == 0 else 2, ".,")
    return _decorate(text, settings, style)


def _decorate(text: str, settings: dict, style: str | None) -> str:
    if style == "percent":
        text += "%"
    elif style == "currency":
        code = settings.get("currency") or "USD"
        symbol, name = CURRENCIES.get(code, (code, code))
        currency_style = settings.get("currency_style") or "symbol"
        negative = text.startswith("-")
        body = text[1:] if negative else text
        if currency_style == "code":
            body = f"{code} {body}"
        elif currency_style == "name":
            body = f"{body} {name}"
        else:
            body = f"{symbol}{body}"
        text = ("-" if negative else "") + body
    return f"{settings.get('prefix') or ''}{text}{settings.get('suffix') or ''}"


def format_number(number: float | int, settings: dict, *, compact: bool = False, identifier: bool = False) -> str:
    """A number written as the column settings ask."""
    if isinstance(number, float) and not math.isfinite(number):
        return "∞" if number > 0 else ("-∞" if number < 0 else "NaN")
    if identifier:
        return f"{settings.get('prefix') or ''}{number}{settings.get('suffix') or ''}"
    if compact:
        return compact_number(number, settings)
    style = settings.get("number_style")
    scaled = number * (settings.get("scale") or 1)
    decimals = settings.get("decimals")
    if style == "percent":
        scaled *= 100
    if style == "scientific":
        text = f"{scaled:.{2 if decimals is None else decimals}e}"
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e{'+' if int(exponent) >= 0 else '-'}{abs(int(exponent))}"
    else:
        if style == "currency" and decimals is None:
            decimals = 2
        text = _grouped(scaled, decimals, settings.get("number_separators") or ".,")
    return _decorate(text, settings, style)


def _extraction(unit: str, value: int) -> str | None:
    if unit == "day-of-week" and 1 <= value <= 7:
        return DAY_NAMES[value - 1]
    if unit == "month-of-year" and 1 <= value <= 12:
        return MONTHS[value - 1]
    if unit == "quarter-of-year":
        return f"Q{value}"
    if unit == "hour-of-day" and 0 <= value <= 23:
        return f"{value % 12 or 12} {'AM' if value < 12 else 'PM'}"
    if unit in ("year", "minute-of-hour", "day-of-month", "day-of-year", "week-of-year"):
        return str(value)
    return None


def parse_temporal(value: Any) -> dt.date | dt.datetime | dt.time | None:
    """A cell as a date, datetime or time (ISO text included); None when it is none of them."""
    if isinstance(value, (dt.date, dt.time)):
        return value
    if isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value)
        except ValueError:
            try:
                return dt.time.fromisoformat(value)
            except ValueError:
                return None
        return parsed.date() if len(value) == 10 else parsed.replace(tzinfo=None)
    return None


def value_formatter(column: dict, viz: dict | None) -> Callable[..., str]:
    """`fmt(value, compact=False) -> str` for one column; None is written as "" (displays say more)."""
    settings = settings_of(column, viz)
    unit = column.get("unit") or ""
    temporal = is_temporal(column) or (unit and not unit.endswith(("-of-week", "-of-year", "-of-day", "-of-month",
                                                                   "-of-quarter", "-of-hour", "-of-era")))
    dates = temporal_formatter(column, settings)
    identifier = column.get("semantic_type") in IDENTIFIERS

    def fmt(value: Any, compact: bool = False) -> str:
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        number = _number(value)
        if number is not None:
            named = _extraction(unit, int(number)) if unit and number == int(number) else None
            if named is not None:
                return named
            return format_number(number, settings, compact=compact, identifier=identifier)
        if temporal or isinstance(value, (dt.date, dt.time)):
            moment = parse_temporal(value)
            if moment is not None:
                return dates(moment)
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value).decode("utf-8", "replace")
        return str(value)

    return fmt


def axis_format(column: dict, viz: dict | None) -> dict:
    """Vega-Lite axis properties writing this column's values: a d3 time format for temporal columns
    (values are UTC wall-clock text: draw them on a `utc` scale, which makes Vega-Lite format in UTC),
    a `labelExpr` for numbers (d3 cannot say currencies other than $, prefix/suffix or scale; large
    values are compacted as Metabase's axes do, "1.2M"); {} for anything else."""
    unit = column.get("unit") or ""
    if is_temporal(column) and unit in AXIS_TIME:
        return {"format": AXIS_TIME[unit], "formatType": "time"}
    if not is_number(column):
        return {}
    settings = settings_of(column, viz)
    style = settings.get("number_style")
    decimals = settings.get("decimals")
    value = f"datum.value * {(settings.get('scale') or 1) * (100 if style == 'percent' else 1)!r}"
    if style == "scientific":
        number = f"format({value}, '.{2 if decimals is None else decimals}e')"
    else:
        places = f".{decimals}f" if decimals is not None else (".2f" if style == "currency" else ".2~f")
        number = (f"(abs({value}) >= 10000 ? replace(format({value}, '.3~s'), 'G', 'B')"
                  f" : format({value}, ',{places}'))")
    before, after = _decorate("\0", settings, style).split("\0")
    if before == after == "":
        return {"labelExpr": number}
    return {"labelExpr": f"{_js(before)} + {number} + {_js(after)}"}


def _js(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
