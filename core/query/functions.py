"""Custom-expression functions beyond arithmetic, as Metabase defines them: URL and email parts, split-part,
conversions (`text`, `integer`, `float`, `date`, `datetime`, `today`) and `convert-timezone`.

Mixed into core.query.clauses.ClauseCompiler (needs `value`, `infer_type`, `driver`, `context`). Each clause
checks what Metabase's schema accepts and answers a 400 naming the clause otherwise; the engine-dependent SQL
is a core.driver.dialect method the drivers override.
"""
from __future__ import annotations

import re
import zoneinfo
from functools import lru_cache

from sqlglot import exp

from core.driver.dialect import lit
from core.http.errors import Invalid

from .coercion import compact_to_datetime, round_to_integer, text_to_integer
from .refs import NUMERIC_TYPES as NUMERIC
from .refs import is_temporal

URL_PARTS = ("host", "domain", "subdomain", "path")
DATETIME_MODES = {"iso": "iso", "simple": "simple", "unixseconds": "unix-seconds",
                  "unixmilliseconds": "unix-milliseconds", "unixmicroseconds": "unix-microseconds",
                  "unixnanoseconds": "unix-nanoseconds", "isobytes": "iso-bytes", "simplebytes": "simple-bytes"}
UNIX_DIVISORS = {"unix-seconds": 1, "unix-milliseconds": 1000, "unix-microseconds": 1000_000,
                 "unix-nanoseconds": 1000_000_000}
FUNCTION_TYPES = {
    **{op: "type/Text" for op in (*URL_PARTS, "split-part", "text")},
    "integer": "type/BigInteger", "float": "type/Float", "date": "type/Date", "today": "type/Date",
    "datetime": "type/DateTime",
}
FUNCTIONS = {*FUNCTION_TYPES, "convert-timezone"}
ZONED_TYPES = ("type/DateTimeWithTZ", "type/DateTimeWithLocalTZ", "type/DateTimeWithZoneOffset",
               "type/DateTimeWithZoneID", "type/Instant")
_OFFSET = re.compile(r"^[+-](?:0\d|1[0-4]):[0-5]\d$")


@lru_cache(maxsize=1)
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def check_timezone(value, what: str) -> str:
    """A zone name (`Asia/Tokyo`) or an offset (`+05:30`), as Metabase's convert-timezone accepts."""
    if not isinstance(value, str) or not (value in _zones() or value == "UTC" or _OFFSET.match(value)):
        raise Invalid(f"Invalid MBQL: convert-timezone needs a valid timezone ID as its {what}, got {value!r}.")
    return value


class FunctionCompiler:
    """The clauses of FUNCTIONS to SQL; `function_type` gives their Metabase base type."""

    def function(self, op: str, args: list) -> exp.Expression:
        driver = self.driver
        if op in URL_PARTS:
            if not driver.url_parts_without_regex:
                self.context.require("regex", f"the {op} function")
            return driver.url_part(self.value(args[0]), op)
        if op == "split-part":
            return self.split_part(args)
        if op == "text":
            return driver.cast_text(*self.typed(args[0]))
        if op == "integer":
            return self.to_integer(args[0])
        if op == "float":
            value, source = self.typed(args[0])
            if source != "type/Text" and source not in NUMERIC and source != "type/*":
                raise Invalid(f"Invalid MBQL: float converts text or a number, not {source}.")
            return driver.to_float(value)
        if op == "date":
            value, source = self.typed(args[0])
            if source == "type/Text":
                return driver.parse_date(value)
            if not is_temporal(source) and source != "type/*":
                raise Invalid(f"Invalid MBQL: date converts text or a date-time, not {source}.")
            return driver.cast_date(value)
        if op == "datetime":
            return self.datetime(args)
        if op == "today":
            return driver.cast_date(driver.now())
        if op == "convert-timezone":
            return self.convert_timezone(args)
        raise Invalid(f"Invalid MBQL: unknown clause {op!r}.")

    def typed(self, arg) -> tuple[exp.Expression, str]:
        """An argument's SQL and base type (compiled first: that also refuses a malformed argument)."""
        value = self.value(arg)
        return value, self.infer_type(arg)

    def function_type(self, op: str, args: list) -> str:
        if op == "convert-timezone":
            return self.infer_type(args[0])
        return FUNCTION_TYPES[op]

    def split_part(self, args: list) -> exp.Expression:
        text, delimiter, position = args
        if not isinstance(delimiter, str) or not delimiter:
            raise Invalid("Invalid MBQL: split-part needs a non-empty literal text as its delimiter.")
        if isinstance(position, bool) or isinstance(position, float):
            raise Invalid(f"Invalid MBQL: split-part needs a whole number as its position, got {position!r}.")
        if isinstance(position, int) and position < 1:
            raise Invalid(f"Invalid MBQL: split-part positions count from 1, got {position}.")
        if isinstance(position, str):
            raise Invalid(f"Invalid MBQL: split-part needs a whole number as its position, got {position!r}.")
        return self.driver.split_part(self.value(text), delimiter, self.value(position))

    def to_integer(self, arg) -> exp.Expression:
        value, source = self.typed(arg)
        if source == "type/Text":
            return text_to_integer(value)
        if source not in NUMERIC and source != "type/*":
            raise Invalid(f"Invalid MBQL: integer converts text or a number, not {source}.")
        return round_to_integer(value)

    def datetime(self, args: list) -> exp.Expression:
        opts = args[1] if len(args) > 1 else {}
        if not isinstance(opts, dict):
            raise Invalid("Invalid MBQL: datetime takes a value and an options map with a mode.")
        raw_mode = opts.get("mode") or "iso"
        mode = DATETIME_MODES.get(str(raw_mode).lower().replace("-", "").replace("_", ""))
        if mode is None:
            raise Invalid(f"Invalid MBQL: datetime does not know the mode {raw_mode!r}.")
        if mode.endswith("-bytes"):
            raise Invalid(f"Invalid MBQL: datetime mode {mode!r} is not supported: no engine here stores "
                          "date-times as bytes.")
        value, source = self.typed(args[0])
        driver = self.driver
        if mode in UNIX_DIVISORS:
            if source not in NUMERIC and source != "type/*":
                raise Invalid(f"Invalid MBQL: datetime mode {mode!r} converts a number, not {source}.")
            return driver.from_unix(value, UNIX_DIVISORS[mode])
        if source != "type/Text" and source != "type/*":
            if is_temporal(source) and mode == "iso":
                return value
            raise Invalid(f"Invalid MBQL: datetime mode {mode!r} converts text, not {source}.")
        if mode == "simple":
            return compact_to_datetime(driver, value)
        return driver.parse_datetime(value)

    def convert_timezone(self, args: list) -> exp.Expression:
        """The wall-clock time in the target zone. Fixed offsets (and UTC) are minute arithmetic, which every
        engine does; a named zone needs the engine's zone database (the `convert-timezone` feature)."""
        target = check_timezone(args[1], "target")
        source = check_timezone(args[2], "source") if len(args) > 2 and args[2] is not None else None
        value, base_type = self.typed(args[0])
        if base_type != "type/*" and not (base_type.startswith("type/DateTime") or base_type == "type/Instant"):
            raise Invalid(f"Invalid MBQL: convert-timezone converts a date-time, not {base_type}.")
        # A zoned value is an instant: only its target zone matters (Metabase refuses a source zone for it).
        aware = base_type in ZONED_TYPES
        if aware and source is not None:
            raise Invalid("Invalid MBQL: convert-timezone takes no source zone for a date-time that has one.")
        if any(_minutes(zone) is None for zone in (target, source) if zone is not None):
            self.context.require("convert-timezone", "convert-timezone with a named time zone")
        driver = self.driver
        if aware:
            utc = driver.zoned_to_utc(value)
        elif source is None or _minutes(source) is not None:
            minutes = _minutes(source or "UTC")
            utc = driver.date_add(value, lit(-minutes), "minute") if minutes else value
        else:
            utc = driver.zone_to_utc(value, source)
        minutes = _minutes(target)
        if minutes is None:
            return driver.utc_to_zone(utc, target)
        return driver.date_add(utc, lit(minutes), "minute") if minutes else utc


def _minutes(zone: str) -> int | None:
    """A fixed zone's offset from UTC in minutes; None for a named zone with rules."""
    if zone == "UTC":
        return 0
    if _OFFSET.match(zone):
        sign = -1 if zone[0] == "-" else 1
        return sign * (int(zone[1:3]) * 60 + int(zone[4:6]))
    return None
