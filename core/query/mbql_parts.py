"""The readers both MBQL dialects share (core.query.mbql_legacy, core.query.mbql5): tokens and map keys,
integers, source tables, field references with their options (temporal unit, binning), literals,
limits and pages, joins, case branches, and the argument positions that hold a temporal unit. Each raises
core.http.errors.Invalid naming what is wrong.
"""
from __future__ import annotations

import math
from typing import Any

from core.http.errors import Invalid
from core.http.types import BIGINT_MAX

from .model import BINNING_STRATEGIES, CARD_TABLE, JOIN_STRATEGIES, MAX_BINS, TEMPORAL_UNITS, Clause, Join, Stage

# Clauses whose legacy form carries a trailing options map.
STRING_FILTERS = frozenset({"contains", "does-not-contain", "starts-with", "ends-with"})


def token(value: Any) -> str:
    """Metabase's normalize-token: a keyword-like string, lower-case, kebab-case, no leading colon."""
    if not isinstance(value, str):
        raise Invalid(f"Invalid MBQL: expected a clause name, got {value!r}.")
    return value.lstrip(":").lower().replace("_", "-")


def key(k: Any) -> str:
    if not isinstance(k, str):
        raise Invalid(f"Invalid MBQL: map keys must be strings, got {k!r}.")
    if k.startswith("lib/"):
        return k
    return k.lstrip(":").lower().replace("_", "-")


def keys(d: Any, where: str) -> dict:
    if d is None:
        return {}
    if not isinstance(d, dict):
        raise Invalid(f"Invalid MBQL: {where} must be a map, got {d!r}.")
    return {key(k): v for k, v in d.items()}


def integer(value: Any, where: str, minimum: int | None = None) -> int:
    """An integer of the query (an id, an index, a count): beyond BIGINT none can name or count anything,
    and an app-DB lookup of one would overflow, so it is refused as the body declarations refuse it."""
    if isinstance(value, bool) or not isinstance(value, int) or value > BIGINT_MAX:
        raise Invalid(f"Invalid MBQL: {where} must be an integer, got {value!r}.")
    if minimum is not None and value < minimum:
        raise Invalid(f"Invalid MBQL: {where} must be an integer >= {minimum}, got {value!r}.")
    return value


def source_table(value: Any, stage: Stage, where: str) -> None:
    if isinstance(value, str):
        match = CARD_TABLE.match(value)
        if not match:
            raise Invalid(f"Invalid MBQL: {where} must be a table id or \"card__<id>\", got {value!r}.")
        stage.source_card = integer(int(match.group(1)), where, 1)
    else:
        stage.source_table = integer(value, where, 1)


def field_opts(opts: Any, where: str) -> dict:
    out = {}
    for k, v in keys(opts, f"options of {where}").items():
        if k.startswith("lib/") or k in ("ident",):
            continue
        if k == "temporal-unit":
            v = token(v)
            if v not in TEMPORAL_UNITS:
                raise Invalid(f"Invalid MBQL: unknown temporal unit {v!r} in {where}.")
        elif k == "binning":
            v = binning_opts(v, where)
        elif k == "source-field":
            v = integer(v, f"source-field of {where}", 1)
        elif k == "join-alias" and not isinstance(v, str):
            raise Invalid(f"Invalid MBQL: join-alias of {where} must be a string.")
        out[k] = v
    return out


def binning_opts(value: Any, where: str) -> dict:
    opts = keys(value, f"binning of {where}")
    strategy = token(opts.get("strategy", "default"))
    if strategy not in BINNING_STRATEGIES:
        raise Invalid(f"Invalid MBQL: unknown binning strategy {strategy!r} in {where}.")
    out: dict = {"strategy": strategy}
    if strategy == "num-bins":
        out["num-bins"] = integer(opts.get("num-bins"), f"num-bins of {where}", 1)
        if out["num-bins"] > MAX_BINS:
            raise Invalid(f"Invalid MBQL: num-bins of {where} must be at most {MAX_BINS}.")
    elif strategy == "bin-width":
        width = opts.get("bin-width")
        if isinstance(width, bool) or not isinstance(width, (int, float)) or not 0 < width < math.inf:
            raise Invalid(f"Invalid MBQL: bin-width of {where} must be a positive number.")
        out["bin-width"] = width
    return out


def field_ref(ident: Any, opts: dict, where: str) -> Clause:
    if isinstance(ident, str):
        if not ident:
            raise Invalid(f"Invalid MBQL: empty field name in {where}.")
        if "base-type" not in opts:
            raise Invalid(f"Invalid MBQL: field {ident!r} in {where} is referenced by name without base-type.")
    else:
        integer(ident, f"field id in {where}", 1)
    return ["field", ident, opts]


# Argument positions holding a temporal unit (a token); the others are expressions or raw values.
UNIT_POSITIONS = {
    "datetime-add": {2}, "datetime-subtract": {2}, "temporal-extract": {1}, "datetime-diff": {2},
    "relative-time-interval": {2, 4}, "during": {2}, "interval": {1}, "relative-datetime": {1},
    "get-week": {1}, "get-day-of-week": {1},
}


def unit_args(op: str, args: list, convert) -> list:
    units = UNIT_POSITIONS[op]
    out = []
    for i, a in enumerate(args):
        if i in units and isinstance(a, str):
            out.append(token(a))
        elif isinstance(a, list):
            out.append(convert(a))
        else:
            out.append(a)
    return out


def case_pairs(args: list, where: str, convert) -> list:
    """The [condition, value] pairs of a case clause (its first argument), both sides read by `convert`."""
    if not args or not isinstance(args[0], list):
        raise Invalid(f"Invalid MBQL: case needs a list of [condition, value] pairs in {where}.")
    pairs = []
    for pair in args[0]:
        if not isinstance(pair, list) or len(pair) != 2:
            raise Invalid(f"Invalid MBQL: malformed case branch {pair!r} in {where}.")
        pairs.append([convert(pair[0], where), convert(pair[1], where)])
    return pairs


def literal(value: Any, where: str) -> Any:
    if value is not None and not isinstance(value, (bool, int, float, str)):
        raise Invalid(f"Invalid MBQL: a value clause in {where} takes a literal, got {value!r}.")
    return value


def as_list(value: Any, where: str) -> list:
    if not isinstance(value, list):
        raise Invalid(f"Invalid MBQL: {where} must be a list.")
    return value


def limit_and_page(stage: Stage, q: dict) -> None:
    if q.get("limit") is not None:
        stage.limit = integer(q["limit"], "limit", 0)
    if q.get("page") is not None:
        page = keys(q["page"], "page")
        stage.page = {"page": integer(page.get("page"), "page.page", 1),
                      "items": integer(page.get("items"), "page.items", 1)}


def make_join(j: dict, stages: list[Stage], condition: Any, where: str, ref) -> Join:
    strategy = token(j.get("strategy") or "left-join")
    if strategy not in JOIN_STRATEGIES:
        raise Invalid(f"Invalid MBQL: unknown join strategy {strategy!r} in {where}.")
    alias = j.get("alias")
    if alias is not None and (not isinstance(alias, str) or not alias):
        raise Invalid(f"Invalid MBQL: alias of {where} must be a non-empty string.")
    fields = j.get("fields", "none")
    if isinstance(fields, str):
        fields = token(fields)
        if fields not in ("all", "none"):
            raise Invalid(f"Invalid MBQL: fields of {where} must be \"all\", \"none\" or a list.")
    elif isinstance(fields, list):
        fields = [ref(f, f"fields of {where}") for f in fields]
    elif fields is None:
        fields = "none"
    else:
        raise Invalid(f"Invalid MBQL: fields of {where} must be \"all\", \"none\" or a list.")
    if condition is None:
        raise Invalid(f"Invalid MBQL: {where} needs a condition.")
    return Join(alias=alias or "", stages=stages, condition=condition, strategy=strategy, fields=fields)
