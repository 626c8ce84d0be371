"""How many arguments each MBQL clause takes, checked before the compiler reads any of them, so a
malformed clause is a 400 naming it rather than an IndexError."""
from __future__ import annotations

from core.http.errors import Invalid

MANY = 99
# (fewest, most) arguments of each clause after normalisation, checked before any is read.
ARITY = {
    **{op: (1, 1) for op in ("upper", "lower", "length", "trim", "ltrim", "rtrim", "abs", "floor", "ceil", "round",
                             "sqrt", "exp", "log", "month-name", "day-name", "quarter-name", "not", "is-null",
                             "not-null", "is-empty", "not-empty", "segment", "metric", "sum", "avg", "min", "max",
                             "distinct", "cum-sum", "stddev", "var", "median", "share", "count-where", "host",
                             "domain", "subdomain", "path", "text", "integer", "float", "date")},
    **{op: (1, 2) for op in ("get-year", "get-quarter", "get-month", "get-week", "get-day", "get-day-of-week",
                             "get-hour", "get-minute", "get-second", "relative-datetime", "value", "case", "if",
                             "aggregation-options", "datetime")},
    **{op: (2, 2) for op in ("offset", "power", "regex-match-first",
                             "interval", "percentile", "sum-where", "distinct-where",
                             "<", "<=", ">", ">=")},
    **{op: (2, 3) for op in ("contains", "does-not-contain", "starts-with", "ends-with", "substring",
                             "temporal-extract")},
    **{op: (3, 3) for op in ("split-part", "between", "replace",
                             "datetime-add", "datetime-subtract", "datetime-diff", "during")},
    **{op: (2, MANY) for op in ("+", "-", "*", "/", "=", "!=", "in", "not-in")},
    **{op: (1, MANY) for op in ("coalesce", "concat", "and", "or")},
    "count": (0, 1), "cum-count": (0, 1), "now": (0, 0), "today": (0, 0), "convert-timezone": (2, 3),
    "time-interval": (3, 4), "relative-time-interval": (5, 5),
    "inside": (6, 6),
}


def check_clause(x) -> None:
    """A clause is a list headed by a name, with as many arguments as that clause takes: a 400 otherwise."""
    if not isinstance(x, list) or not x or not isinstance(x[0], str):
        raise Invalid(f"Invalid MBQL: expected a clause, got {x!r}.")
    fewest, most = ARITY.get(x[0], (0, MANY))
    if not fewest <= len(x) - 1 <= most:
        wanted = str(fewest) if fewest == most else f"{fewest} to {most}" if most != MANY else f"at least {fewest}"
        raise Invalid(f"Invalid MBQL: {x[0]!r} takes {wanted} argument(s), got {len(x) - 1}.")
