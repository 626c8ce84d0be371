"""Coercion strategies applied to field columns, as Metabase's SQL compiler applies them: a field with a
coercion strategy (set through PUT /api/field/:id) reads as its converted value wherever a query uses
it: selected, bucketed, filtered, sorted, joined on or in an expression.

`coerce` is the one place a strategy becomes SQL. It runs on a column read straight from a table (a
later stage reads the converted column of the stage before, so nothing is converted twice) and builds
the conversion from the driver's dialect methods (core.driver.dialect), so an engine that differs
overrides one of those, not this module. The conversions are the ones the `datetime`, `integer` and
`float` expressions use, so a coerced column and the matching expression give the same values:

- UNIX seconds, milliseconds, microseconds, nanoseconds: a UTC instant, as a date-time without zone;
- ISO-8601 text: parsed to a date-time, a date or a time; YYYYMMDDHHMMSS text: parsed to a date-time;
- a date-time to its date; text to a float or an integer; a float to the nearest integer, halves up.

A strategy that does not fit the column's base type is left out, as Metabase leaves it (the field API
refuses to set one). Date-times stored as bytes are refused with a 400: no engine here syncs byte
columns as something a query could parse.
"""
from __future__ import annotations

from sqlglot import exp

from core.driver.dialect import lit
from core.http.errors import Invalid
from core.sync.semantic_types import COERCIONS, coercible

UNIX_DIVISORS = {
    "Coercion/UNIXSeconds->DateTime": 1,
    "Coercion/UNIXMilliSeconds->DateTime": 1_000,
    "Coercion/UNIXMicroSeconds->DateTime": 1_000_000,
    "Coercion/UNIXNanoSeconds->DateTime": 1_000_000_000,
}
BYTES = ("Coercion/ISO8601Bytes->Temporal", "Coercion/YYYYMMDDHHMMSSBytes->Temporal")


def coerce(driver, expr: exp.Expression, strategy: str | None, base_type: str | None,
           what: str) -> tuple[exp.Expression, str | None]:
    """`expr` (a column of base type `base_type`) converted by `strategy`, and the type its SQL then has;
    (expr, None) when there is nothing to convert. `what` names the field in an error."""
    if not strategy or strategy not in COERCIONS or not coercible(strategy, base_type):
        return expr, None
    if strategy in BYTES:
        raise Invalid(f"Invalid MBQL: {what} has the coercion strategy {strategy}, which the {driver.engine} "
                      "driver does not support: date-times stored as bytes cannot be converted here.")
    if strategy in UNIX_DIVISORS:
        converted = driver.from_unix(expr, UNIX_DIVISORS[strategy])
    elif strategy == "Coercion/ISO8601->DateTime":
        converted = driver.parse_datetime(expr)
    elif strategy == "Coercion/ISO8601->Date":
        converted = driver.parse_date(expr)
    elif strategy == "Coercion/ISO8601->Time":
        converted = driver.parse_time(expr)
    elif strategy == "Coercion/YYYYMMDDHHMMSSString->Temporal":
        converted = compact_to_datetime(driver, expr)
    elif strategy == "Coercion/DateTime->Date":
        converted = driver.cast_date(expr)
    elif strategy == "Coercion/String->Float":
        converted = driver.to_float(expr)
    elif strategy == "Coercion/String->Integer":
        converted = text_to_integer(expr)
    else:  # Coercion/Float->Integer
        converted = round_to_integer(expr)
    # The instant is computed as UTC wall-clock time without a zone, so SQL treats it as a plain date-time
    # (convert-timezone then takes it as UTC, not as a zoned value); results still report type/Instant.
    converted_type = COERCIONS[strategy]
    return converted, "type/DateTime" if converted_type == "type/Instant" else converted_type


def compact_to_datetime(driver, expr: exp.Expression) -> exp.Expression:
    """'YYYYMMDDHHMMSS' text as a date-time: rewritten to 'YYYY-MM-DD HH:MM:SS', then parsed as ISO text."""
    pieces: list[exp.Expression] = []
    for i, (start, length) in enumerate(((1, 4), (5, 2), (7, 2), (9, 2), (11, 2), (13, 2))):
        if i:
            pieces.append(lit(("-", "-", " ", ":", ":")[i - 1]))
        pieces.append(exp.Substring(this=expr.copy(), start=lit(start), length=lit(length)))
    return driver.parse_datetime(exp.Concat(expressions=pieces, safe=False))


def text_to_integer(expr: exp.Expression) -> exp.Expression:
    return exp.Cast(this=expr, to=exp.DataType.build("bigint"))


def round_to_integer(expr: exp.Expression) -> exp.Expression:
    """The nearest integer, halves up (Java's Math.round, which Metabase's tests expect), the same on every
    engine: a plain cast rounds half to even on some and truncates on SQLite."""
    rounded = exp.Floor(this=exp.Add(this=expr, expression=lit(0.5)))
    return exp.Cast(this=rounded, to=exp.DataType.build("bigint"))
