"""MBQL in words, for `definition_description` of segments and legacy metrics ("Filtered by Total is
greater than 100", "Sum of Total"), in the spirit of Metabase's lib describe functions.

Works on normalised clauses (core.query.mbql); names come from Field display names. Anything it
cannot phrase falls back to a neutral word rather than failing: a description never blocks a listing.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

_COMPARE = {"=": "is", "!=": "is not", "<": "is less than", ">": "is greater than", "<=": "is less than or equal to",
            ">=": "is greater than or equal to"}
_STRING = {"contains": "contains", "does-not-contain": "does not contain", "starts-with": "starts with",
           "ends-with": "ends with"}
_NULLNESS = {"is-null": "is empty", "not-null": "is not empty", "is-empty": "is empty", "not-empty": "is not empty"}
_AGGREGATIONS = {"sum": "Sum of", "avg": "Average of", "min": "Min of", "max": "Max of",
                 "distinct": "Distinct values of", "cum-sum": "Cumulative sum of",
                 "stddev": "Standard deviation of", "var": "Variance of", "median": "Median of"}


class Describer:
    def __init__(self, session: Session):
        self.session = session

    def column(self, x: Any) -> str:
        from core.appdb.models import Field, Segment

        if isinstance(x, list) and x and x[0] == "field":
            if isinstance(x[1], int):
                field = self.session.get(Field, x[1])
                return (field.display_name or field.name) if field is not None else f"Field {x[1]}"
            return str(x[1])
        if isinstance(x, list) and x and x[0] == "expression":
            return str(x[1])
        if isinstance(x, list) and x and x[0] == "segment":
            segment = self.session.get(Segment, x[1]) if isinstance(x[1], int) else None
            return segment.name if segment is not None else "a segment"
        if isinstance(x, list) and x and x[0] == "value":
            return self.column(x[1])
        if isinstance(x, list):
            return "an expression"
        return str(x)

    def filter(self, x: Any) -> str:
        if not isinstance(x, list) or not x:
            return str(x)
        op, args = x[0], x[1:]
        if op in ("and", "or"):
            return f" {op} ".join(self.filter(a) for a in args)
        if op == "not":
            return f"not {self.filter(args[0])}"
        if op == "segment":
            return self.column(x)
        if op in _COMPARE and len(args) >= 2:
            values = [self.column(v) for v in args[1:]]
            if len(values) > 1:
                verb = "is" if op == "=" else "is not"
                return f"{self.column(args[0])} {verb} {len(values)} selections"
            return f"{self.column(args[0])} {_COMPARE[op]} {values[0]}"
        if op in ("in", "not-in") and len(args) >= 2:
            return self.filter(["=" if op == "in" else "!=", *args])
        if op == "between" and len(args) == 3:
            return f"{self.column(args[0])} is between {self.column(args[1])} and {self.column(args[2])}"
        if op in _STRING and len(args) >= 2:
            return f"{self.column(args[0])} {_STRING[op]} {self.column(args[1])}"
        if op in _NULLNESS and args:
            return f"{self.column(args[0])} {_NULLNESS[op]}"
        if op == "time-interval" and len(args) >= 3:
            amount, unit = args[1], args[2]
            if amount == "current":
                return f"{self.column(args[0])} is this {unit}"
            if isinstance(amount, int):
                direction = "previous" if amount < 0 else "next"
                count = abs(amount)
                return f"{self.column(args[0])} is in the {direction} {count} {unit}{'s' if count != 1 else ''}"
        if op == "inside":
            return f"{self.column(args[0])} and {self.column(args[1])} are inside a region"
        return "a custom condition"

    def aggregation(self, x: Any) -> str:
        if not isinstance(x, list) or not x:
            return str(x)
        op, args = x[0], x[1:]
        if op == "aggregation-options":
            opts = args[1] if len(args) > 1 and isinstance(args[1], dict) else {}
            return opts.get("display-name") or opts.get("name") or self.aggregation(args[0])
        if op in ("count", "cum-count"):
            word = "Count" if op == "count" else "Cumulative count"
            return f"{word} of {self.column(args[0])}" if args else word
        if op in _AGGREGATIONS and args:
            return f"{_AGGREGATIONS[op]} {self.column(args[0])}"
        if op == "percentile" and len(args) == 2:
            return f"{args[1]}th percentile of {self.column(args[0])}"
        if op == "share":
            return "Share of rows matching condition"
        if op == "count-where":
            return "Count of rows matching condition"
        if op in ("sum-where", "distinct-where") and args:
            prefix = _AGGREGATIONS["sum" if op == "sum-where" else "distinct"]
            return f"{prefix} {self.column(args[0])} matching condition"
        return "Custom expression"


def describe_filters(session: Session, filters: list) -> str | None:
    if not filters:
        return None
    describer = Describer(session)
    return "Filtered by " + " and ".join(describer.filter(f) for f in filters)


def describe_aggregations(session: Session, aggregations: list) -> str | None:
    if not aggregations:
        return None
    describer = Describer(session)
    return " and ".join(describer.aggregation(a) for a in aggregations)
