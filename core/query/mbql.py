"""MBQL in, one internal model out: legacy MBQL (with its pre-0.40 forms) and MBQL 5 ("stages").

`normalize(dataset_query)` returns a `Query` whose stages run innermost first. Inside a stage every
clause is a list in the canonical legacy shape the compiler reads:

- field refs are `["field", id | name, opts]` with `opts` always a dict (kebab-case keys);
  `["expression", name, opts]` and `["aggregation", index, opts]` likewise;
- other clauses are `[op, *args]` with op tokens lower-case and kebab-case, options (case-sensitivity,
  include-current, case default) in the legacy position;
- MBQL 5 options-second clauses are turned around, aggregation uuids become indexes, and expression
  names and aggregation names move where legacy MBQL keeps them.

Anything that is not MBQL raises core.http.errors.Invalid naming the clause, so a client gets a 400.
The dialects are read by core.query.mbql_legacy and core.query.mbql5, with the pieces they share in
core.query.mbql_parts.
"""
from __future__ import annotations

from typing import Any

from core.http.errors import Invalid
from core.http.jsontext import depth_exceeds
from core.http.types import BIGINT_MAX

from .mbql5 import Mbql5Reader
from .mbql_legacy import LegacyReader
from .mbql_parts import key, keys, token
from .model import Query, Stage

MAX_DEPTH = 48
"""How deeply lists and maps may nest in a dataset_query. Real queries stay far below (a dozen
levels); the cap keeps the recursive normaliser and compiler away from Python's recursion limit
whatever the query's origin (request bodies are capped at 64 levels by core.http.jsontext)."""


def normalize(query: Any) -> Query:
    """The internal model of a whole dataset_query, legacy or MBQL 5; Invalid names what is wrong."""
    if not isinstance(query, dict):
        raise Invalid("Invalid MBQL: the query must be a map.")
    if depth_exceeds(query, MAX_DEPTH):
        raise Invalid(f"Invalid MBQL: the query is nested more than {MAX_DEPTH} levels deep.")
    outer = {(key(k) if not str(k).startswith("lib/") else k): v for k, v in query.items()}
    database = outer.get("database")
    if isinstance(database, bool) or not isinstance(database, int) or abs(database) > BIGINT_MAX:
        raise Invalid("Invalid MBQL: database must be an integer.")
    common = {
        "parameters": outer.get("parameters") or [],
        "constraints": keys(outer.get("constraints"), "constraints") or None,
        "middleware": keys(outer.get("middleware"), "middleware") or None,
        "settings": outer.get("settings"),
        "info": outer.get("info"),
    }
    if not isinstance(common["parameters"], list):
        raise Invalid("Invalid MBQL: parameters must be a list.")
    if outer.get("lib/type") == "mbql/query" or "stages" in outer:
        return Query(database=database, stages=Mbql5Reader().stages(outer.get("stages"), "query"), **common)
    kind = token(outer.get("type") or "")
    if kind == "query":
        if not isinstance(outer.get("query"), dict):
            raise Invalid("Invalid MBQL: a query of type \"query\" needs a \"query\" map.")
        return Query(database=database, stages=LegacyReader().inner(outer["query"]), **common)
    if kind == "native":
        native = keys(outer.get("native"), "native")
        if not isinstance(native.get("query"), str):
            raise Invalid("Invalid MBQL: a native query needs native.query, the SQL text.")
        return Query(database=database, stages=[Stage(native={"query": native["query"],
                                                                "template-tags": native.get("template-tags") or {}})],
                     **common)
    raise Invalid("Invalid MBQL: type must be \"query\" or \"native\", or the query must be MBQL 5 with stages.")
