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
"""
from __future__ import annotations

import math
from typing import Any

from core.http.errors import Invalid
from core.http.jsontext import depth_exceeds

from .model import BINNING_STRATEGIES, CARD_TABLE, JOIN_STRATEGIES, MAX_BINS, TEMPORAL_UNITS, Clause, Join, Query, Stage

# Clauses whose legacy form carries a trailing options map.
_STRING_FILTERS = frozenset({"contains", "does-not-contain", "starts-with", "ends-with"})


# --------------------------------------------------------------------------------------------------
# Tokens and keys
# --------------------------------------------------------------------------------------------------

def token(value: Any) -> str:
    """Metabase's normalize-token: a keyword-like string, lower-case, kebab-case, no leading colon."""
    if not isinstance(value, str):
        raise Invalid(f"Invalid MBQL: expected a clause name, got {value!r}.")
    return value.lstrip(":").lower().replace("_", "-")


def _key(k: Any) -> str:
    if not isinstance(k, str):
        raise Invalid(f"Invalid MBQL: map keys must be strings, got {k!r}.")
    if k.startswith("lib/"):
        return k
    return k.lstrip(":").lower().replace("_", "-")


def _keys(d: Any, where: str) -> dict:
    if d is None:
        return {}
    if not isinstance(d, dict):
        raise Invalid(f"Invalid MBQL: {where} must be a map, got {d!r}.")
    return {_key(k): v for k, v in d.items()}


def _int(value: Any, where: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid(f"Invalid MBQL: {where} must be an integer, got {value!r}.")
    if minimum is not None and value < minimum:
        raise Invalid(f"Invalid MBQL: {where} must be an integer >= {minimum}, got {value!r}.")
    return value


def _source_table(value: Any, stage: Stage, where: str) -> None:
    if isinstance(value, str):
        match = CARD_TABLE.match(value)
        if not match:
            raise Invalid(f"Invalid MBQL: {where} must be a table id or \"card__<id>\", got {value!r}.")
        stage.source_card = int(match.group(1))
    else:
        stage.source_table = _int(value, where, 1)


def _field_opts(opts: Any, where: str) -> dict:
    out = {}
    for k, v in _keys(opts, f"options of {where}").items():
        if k.startswith("lib/") or k in ("ident",):
            continue
        if k == "temporal-unit":
            v = token(v)
            if v not in TEMPORAL_UNITS:
                raise Invalid(f"Invalid MBQL: unknown temporal unit {v!r} in {where}.")
        elif k == "binning":
            v = _binning(v, where)
        elif k == "source-field":
            v = _int(v, f"source-field of {where}", 1)
        elif k == "join-alias" and not isinstance(v, str):
            raise Invalid(f"Invalid MBQL: join-alias of {where} must be a string.")
        out[k] = v
    return out


def _binning(value: Any, where: str) -> dict:
    opts = _keys(value, f"binning of {where}")
    strategy = token(opts.get("strategy", "default"))
    if strategy not in BINNING_STRATEGIES:
        raise Invalid(f"Invalid MBQL: unknown binning strategy {strategy!r} in {where}.")
    out: dict = {"strategy": strategy}
    if strategy == "num-bins":
        out["num-bins"] = _int(opts.get("num-bins"), f"num-bins of {where}", 1)
        if out["num-bins"] > MAX_BINS:
            raise Invalid(f"Invalid MBQL: num-bins of {where} must be at most {MAX_BINS}.")
    elif strategy == "bin-width":
        width = opts.get("bin-width")
        if isinstance(width, bool) or not isinstance(width, (int, float)) or not 0 < width < math.inf:
            raise Invalid(f"Invalid MBQL: bin-width of {where} must be a positive number.")
        out["bin-width"] = width
    return out


def _field(ident: Any, opts: dict, where: str) -> Clause:
    if isinstance(ident, str):
        if not ident:
            raise Invalid(f"Invalid MBQL: empty field name in {where}.")
        if "base-type" not in opts:
            raise Invalid(f"Invalid MBQL: field {ident!r} in {where} is referenced by name without base-type.")
    else:
        _int(ident, f"field id in {where}", 1)
    return ["field", ident, opts]


# --------------------------------------------------------------------------------------------------
# Legacy MBQL
# --------------------------------------------------------------------------------------------------

class _Legacy:
    """Legacy clauses to the canonical shape, old forms included."""

    def ref(self, x: Any, where: str) -> Clause:
        """A field, expression or aggregation reference; bare integers are pre-0.30 field ids."""
        if isinstance(x, int) and not isinstance(x, bool):
            return _field(x, {}, where)
        if not isinstance(x, list) or not x:
            raise Invalid(f"Invalid MBQL: expected a field reference in {where}, got {x!r}.")
        op = token(x[0])
        args = x[1:]
        if op == "field":
            if len(args) not in (1, 2):
                raise Invalid(f"Invalid MBQL: malformed field clause {x!r} in {where}.")
            return _field(args[0], _field_opts(args[1] if len(args) > 1 else None, where), where)
        if op == "field-id":
            return _field(_int(args[0] if args else None, f"field-id in {where}", 1), {}, where)
        if op == "field-literal":
            if len(args) < 2:
                raise Invalid(f"Invalid MBQL: malformed field-literal {x!r} in {where}.")
            return _field(args[0], {"base-type": args[1]}, where)
        if op == "fk->":
            if len(args) != 2:
                raise Invalid(f"Invalid MBQL: fk-> takes two fields, got {x!r} in {where}.")
            source, dest = self.ref(args[0], where), self.ref(args[1], where)
            if not isinstance(source[1], int):
                raise Invalid(f"Invalid MBQL: the source of fk-> in {where} must be a field id.")
            dest[2] = {**dest[2], "source-field": source[1]}
            return dest
        if op == "datetime-field":
            rest = [a for a in args[1:] if not (isinstance(a, str) and token(a) == "as")]
            if len(args) < 2 or len(rest) != 1:
                raise Invalid(f"Invalid MBQL: malformed datetime-field {x!r} in {where}.")
            inner = self.ref(args[0], where)
            inner[2] = {**inner[2], **_field_opts({"temporal-unit": rest[0]}, where)}
            return inner
        if op == "binning-strategy":
            if len(args) < 2:
                raise Invalid(f"Invalid MBQL: malformed binning-strategy {x!r} in {where}.")
            inner = self.ref(args[0], where)
            strategy = token(args[1])
            binning: dict = {"strategy": strategy}
            if strategy in ("num-bins", "bin-width") and len(args) > 2:
                binning[strategy] = args[2]
            inner[2] = {**inner[2], "binning": _binning(binning, where)}
            return inner
        if op == "joined-field":
            if len(args) != 2 or not isinstance(args[0], str):
                raise Invalid(f"Invalid MBQL: malformed joined-field {x!r} in {where}.")
            inner = self.ref(args[1], where)
            inner[2] = {**inner[2], "join-alias": args[0]}
            return inner
        if op == "expression":
            if not args or not isinstance(args[0], str):
                raise Invalid(f"Invalid MBQL: malformed expression reference {x!r} in {where}.")
            return ["expression", args[0], _keys(args[1] if len(args) > 1 else None, where)]
        if op in ("aggregation", "aggregate-field"):
            return ["aggregation", _int(args[0] if args else None, f"aggregation index in {where}", 0),
                    _keys(args[1] if len(args) > 1 else None, where)]
        raise Invalid(f"Invalid MBQL: expected a field reference in {where}, got {x!r}.")

    def expr(self, x: Any, where: str) -> Any:
        """Any expression: a literal, a reference or a function clause."""
        if x is None or isinstance(x, (bool, int, float, str)):
            return x
        if isinstance(x, dict):
            raise Invalid(f"Invalid MBQL: unexpected map {x!r} in {where}.")
        if not isinstance(x, list) or not x:
            raise Invalid(f"Invalid MBQL: malformed clause {x!r} in {where}.")
        op = token(x[0])
        if op in ("field", "field-id", "field-literal", "fk->", "datetime-field", "binning-strategy",
                  "joined-field", "expression", "aggregation", "aggregate-field"):
            return self.ref(x, where)
        args = x[1:]
        if op == "value":
            return ["value", _literal(args[0] if args else None, where), _keys(args[1] if len(args) > 1 else None, where)]
        if op == "case" or op == "if":
            return self.case(args, where)
        if op == "aggregation-options" or op == "named":
            if not args:
                raise Invalid(f"Invalid MBQL: empty {op} in {where}.")
            if op == "named":
                opts = {"name": args[1]} if len(args) > 1 else {}
            else:
                opts = _keys(args[1] if len(args) > 1 else None, where)
            return ["aggregation-options", self.expr(args[0], where), opts]
        if op in _STRING_FILTERS:
            opts = {}
            if len(args) == 3 and isinstance(args[2], dict):
                opts = _keys(args[2], where)
                args = args[:2]
            return [op, *(self.expr(a, where) for a in args), opts]
        if op == "time-interval":
            if len(args) < 3:
                raise Invalid(f"Invalid MBQL: time-interval needs a field, an amount and a unit in {where}.")
            opts = _keys(args[3], where) if len(args) > 3 else {}
            return [op, self.ref(args[0], where), args[1], token(args[2]), opts]
        if op in UNIT_POSITIONS:
            return [op, *_unit_args(op, args, lambda a: self.expr(a, where))]
        if op == "count" and not args:
            return ["count"]
        if op == "offset":
            # Legacy offset takes its options first: ["offset", {name?}, expression, n].
            leading = bool(args) and isinstance(args[0], dict)
            opts = _keys(args[0], where) if leading else {}
            clause = ["offset", *(self.expr(a, where) for a in (args[1:] if leading else args))]
            names = {k: opts[k] for k in ("name", "display-name") if opts.get(k)}
            return ["aggregation-options", clause, names] if names else clause
        if op == "datetime" and len(args) == 2 and isinstance(args[1], dict):
            return [op, self.expr(args[0], where), _keys(args[1], where)]
        return [op, *(self.expr(a, where) for a in args)]

    def case(self, args: list, where: str) -> Clause:
        if not args or not isinstance(args[0], list):
            raise Invalid(f"Invalid MBQL: case needs a list of [condition, value] pairs in {where}.")
        pairs = []
        for pair in args[0]:
            if not isinstance(pair, list) or len(pair) != 2:
                raise Invalid(f"Invalid MBQL: malformed case branch {pair!r} in {where}.")
            pairs.append([self.expr(pair[0], where), self.expr(pair[1], where)])
        opts = _keys(args[1], where) if len(args) > 1 and isinstance(args[1], dict) else {}
        if "default" in opts:
            opts["default"] = self.expr(opts["default"], where)
        return ["case", pairs, opts]

    def order_by(self, x: Any) -> Clause:
        if isinstance(x, list) and len(x) == 2:
            first, second = x
            if isinstance(first, str) and token(first) in ("asc", "desc"):
                return [token(first), self.ref(second, "order-by")]
            if isinstance(second, str) and token(second) in ("ascending", "descending"):
                return ["asc" if token(second) == "ascending" else "desc", self.ref(first, "order-by")]
        raise Invalid(f"Invalid MBQL: malformed order-by clause {x!r}.")

    def inner(self, inner: Any, where: str = "query") -> list[Stage]:
        q = _keys(inner, where)
        if "source-table" in q and "source-query" in q:
            raise Invalid(f"Invalid MBQL: {where} has both source-table and source-query.")
        stages: list[Stage] = []
        stage = Stage()
        if "source-query" in q:
            source = _keys(q["source-query"], "source-query")
            if "native" in source:
                stages.append(Stage(native={"query": source["native"],
                                            "template-tags": source.get("template-tags") or {}}))
            else:
                stages.extend(self.inner(source, "source-query"))
        elif "source-table" in q:
            _source_table(q["source-table"], stage, f"source-table of {where}")
        else:
            raise Invalid(f"Invalid MBQL: {where} needs a source-table or a source-query.")
        self.fill(stage, q)
        stages.append(stage)
        return stages

    def fill(self, stage: Stage, q: dict) -> None:
        for i, join in enumerate(q.get("joins") or []):
            stage.joins.append(self.join(join, i))
        expressions = _keys(q.get("expressions"), "expressions") if "expressions" in q else {}
        # Expression names are user text: keep them as given, only the map keys were normalised.
        raw_names = {_key(k): k for k in (q.get("expressions") or {})}
        stage.expressions = {raw_names[k]: self.expr(v, f"expression {raw_names[k]!r}") for k, v in expressions.items()}
        if q.get("filter") is not None:
            stage.filters = [self.expr(q["filter"], "filter")]
        aggregations = q.get("aggregation")
        if aggregations is not None:
            if not isinstance(aggregations, list):
                raise Invalid("Invalid MBQL: aggregation must be a list.")
            # Pre-0.30 single aggregation: ["count"] instead of [["count"]].
            if aggregations and isinstance(aggregations[0], str):
                aggregations = [aggregations]
            stage.aggregations = [self.expr(a, "aggregation") for a in aggregations]
        if q.get("breakout") is not None:
            stage.breakouts = [self.ref(b, "breakout") for b in _list(q["breakout"], "breakout")]
        if q.get("fields") is not None:
            stage.fields = [self.ref(f, "fields") for f in _list(q["fields"], "fields")]
        if q.get("order-by") is not None:
            stage.order_by = [self.order_by(o) for o in _list(q["order-by"], "order-by")]
        _limits(stage, q)
        stage.source_metadata = q.get("source-metadata")

    def join(self, join: Any, i: int) -> Join:
        j = _keys(join, f"join {i}")
        where = f"join {j.get('alias', i)!r}"
        if "source-table" not in j and "source-query" not in j:
            raise Invalid(f"Invalid MBQL: {where} needs a source-table or a source-query.")
        if "source-query" in j and "source-table" not in j:
            source = _keys(j["source-query"], f"source-query of {where}")
            if "native" in source:
                stages = [Stage(native={"query": source["native"], "template-tags": source.get("template-tags") or {}})]
            else:
                stages = self.inner(source, f"source-query of {where}")
        else:
            stages = self.inner({k: v for k, v in j.items() if k == "source-table"}, where)
        condition = self.expr(j.get("condition"), f"condition of {where}") if j.get("condition") is not None else None
        return _join(j, stages, condition, where, self.ref)


# Argument positions holding a temporal unit (a token); the others are expressions or raw values.
UNIT_POSITIONS = {
    "datetime-add": {2}, "datetime-subtract": {2}, "temporal-extract": {1}, "datetime-diff": {2},
    "relative-time-interval": {2, 4}, "during": {2}, "interval": {1}, "relative-datetime": {1},
    "get-week": {1}, "get-day-of-week": {1},
}


def _unit_args(op: str, args: list, convert) -> list:
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


def _literal(value: Any, where: str) -> Any:
    if value is not None and not isinstance(value, (bool, int, float, str)):
        raise Invalid(f"Invalid MBQL: a value clause in {where} takes a literal, got {value!r}.")
    return value


def _list(value: Any, where: str) -> list:
    if not isinstance(value, list):
        raise Invalid(f"Invalid MBQL: {where} must be a list.")
    return value


def _limits(stage: Stage, q: dict) -> None:
    if q.get("limit") is not None:
        stage.limit = _int(q["limit"], "limit", 0)
    if q.get("page") is not None:
        page = _keys(q["page"], "page")
        stage.page = {"page": _int(page.get("page"), "page.page", 1), "items": _int(page.get("items"), "page.items", 1)}


def _join(j: dict, stages: list[Stage], condition: Any, where: str, ref) -> Join:
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


# --------------------------------------------------------------------------------------------------
# MBQL 5
# --------------------------------------------------------------------------------------------------

class _Pmbql:
    """MBQL 5 clauses ([op, opts, *args]) to the canonical legacy shape."""

    def __init__(self):
        self.aggregation_index: dict[str, int] = {}

    def clause(self, x: Any, where: str) -> Any:
        if x is None or isinstance(x, (bool, int, float, str)):
            return x
        if not isinstance(x, list) or not x:
            raise Invalid(f"Invalid MBQL: malformed clause {x!r} in {where}.")
        op = token(x[0])
        if len(x) < 2 or not isinstance(x[1], dict):
            raise Invalid(f"Invalid MBQL: clause {op!r} in {where} needs an options map as its second element.")
        opts = _keys(x[1], f"options of {op}")
        args = x[2:]
        if op == "field":
            if len(args) != 1:
                raise Invalid(f"Invalid MBQL: malformed field clause in {where}.")
            return _field(args[0], _field_opts(opts, where), where)
        if op == "expression":
            if len(args) != 1 or not isinstance(args[0], str):
                raise Invalid(f"Invalid MBQL: malformed expression reference in {where}.")
            return ["expression", args[0], _plain(opts)]
        if op == "aggregation":
            if len(args) != 1:
                raise Invalid(f"Invalid MBQL: malformed aggregation reference in {where}.")
            target = args[0]
            if isinstance(target, int) and not isinstance(target, bool):
                return ["aggregation", target, {}]
            if target not in self.aggregation_index:
                raise Invalid(f"Invalid MBQL: no aggregation with uuid {target!r} in {where}.")
            return ["aggregation", self.aggregation_index[target], {}]
        if op == "value":
            return ["value", _literal(args[0] if args else None, where), _plain(opts)]
        if op in ("case", "if"):
            if not args or not isinstance(args[0], list):
                raise Invalid(f"Invalid MBQL: case needs a list of [condition, value] pairs in {where}.")
            pairs = []
            for pair in args[0]:
                if not isinstance(pair, list) or len(pair) != 2:
                    raise Invalid(f"Invalid MBQL: malformed case branch {pair!r} in {where}.")
                pairs.append([self.clause(pair[0], where), self.clause(pair[1], where)])
            out_opts = {}
            if len(args) > 1:
                out_opts["default"] = self.clause(args[1], where)
            return ["case", pairs, out_opts]
        if op in _STRING_FILTERS:
            if len(args) < 2:
                raise Invalid(f"Invalid MBQL: {op} needs a column and a string in {where}.")
            column = self.clause(args[0], where)
            sensitivity = {k: v for k, v in opts.items() if k == "case-sensitive"}
            parts = [[op, column, self.clause(s, where), dict(sensitivity)] for s in args[1:]]
            if len(parts) == 1:
                return parts[0]
            return ["and" if op == "does-not-contain" else "or", *parts]
        if op == "time-interval":
            if len(args) < 3:
                raise Invalid(f"Invalid MBQL: time-interval needs a field, an amount and a unit in {where}.")
            return [op, self.clause(args[0], where), args[1], token(args[2]),
                    {k: v for k, v in opts.items() if k == "include-current"}]
        if op in UNIT_POSITIONS:
            return [op, *_unit_args(op, args, lambda a: self.clause(a, where))]
        if op in ("asc", "desc"):
            return [op, self.clause(args[0], where)]
        if op == "datetime":
            mode = {k: v for k, v in opts.items() if k == "mode"}
            return [op, *(self.clause(a, where) for a in args), *([mode] if mode else [])]
        out = [op, *(self.clause(a, where) for a in args)]
        return out

    def aggregation(self, x: Any, i: int) -> Clause:
        clause = self.clause(x, "aggregation")
        opts = _keys(x[1], "aggregation options") if isinstance(x, list) and len(x) > 1 else {}
        names = {k: opts[k] for k in ("name", "display-name") if opts.get(k)}
        return ["aggregation-options", clause, names] if names else clause

    def stage(self, s: Any, i: int, where: str) -> Stage:
        q = _keys(s, f"stage {i} of {where}")
        kind = q.get("lib/type", "mbql.stage/mbql")
        stage = Stage()
        if kind == "mbql.stage/native":
            if i != 0:
                raise Invalid(f"Invalid MBQL: a native stage may only be the first stage of {where}.")
            stage.native = {"query": q.get("native"), "template-tags": q.get("template-tags") or {}}
            return stage
        if kind != "mbql.stage/mbql":
            raise Invalid(f"Invalid MBQL: unknown stage type {kind!r} in {where}.")
        if "filter" in q:
            raise Invalid(f"Invalid MBQL: stage {i} of {where} uses \"filter\"; MBQL 5 stages take \"filters\".")
        sources = [k for k in ("source-table", "source-card") if k in q]
        if i == 0 and len(sources) != 1:
            raise Invalid(f"Invalid MBQL: the first stage of {where} needs exactly one of source-table or source-card.")
        if i > 0 and sources:
            raise Invalid(f"Invalid MBQL: only the first stage of {where} may have a source.")
        if "source-table" in q:
            _source_table(q["source-table"], stage, f"source-table of {where}")
        if "source-card" in q:
            stage.source_card = _int(q["source-card"], f"source-card of {where}", 1)
        self.aggregation_index = {}
        for j, join in enumerate(q.get("joins") or []):
            stage.joins.append(self.join(join, j))
        for e in _list(q.get("expressions") or [], "expressions"):
            opts = _keys(e[1], "expression options") if isinstance(e, list) and len(e) > 1 else {}
            name = opts.get("lib/expression-name")
            if not isinstance(name, str) or not name:
                raise Invalid("Invalid MBQL: an expression in an MBQL 5 stage needs lib/expression-name.")
            stage.expressions[name] = self.clause(e, f"expression {name!r}")
        stage.filters = [self.clause(f, "filters") for f in _list(q.get("filters") or [], "filters")]
        for j, a in enumerate(_list(q.get("aggregation") or [], "aggregation")):
            if isinstance(a, list) and len(a) > 1 and isinstance(a[1], dict) and a[1].get("lib/uuid"):
                self.aggregation_index[a[1]["lib/uuid"]] = j
            stage.aggregations.append(self.aggregation(a, j))
        stage.breakouts = [self.clause(b, "breakout") for b in _list(q.get("breakout") or [], "breakout")]
        if q.get("fields") is not None:
            stage.fields = [self.clause(f, "fields") for f in _list(q["fields"], "fields")]
        stage.order_by = [self.clause(o, "order-by") for o in _list(q.get("order-by") or [], "order-by")]
        for o in stage.order_by:
            if o[0] not in ("asc", "desc"):
                raise Invalid(f"Invalid MBQL: order-by takes asc or desc clauses, got {o[0]!r}.")
        _limits(stage, q)
        return stage

    def stages(self, stages: Any, where: str) -> list[Stage]:
        if not isinstance(stages, list) or not stages:
            raise Invalid(f"Invalid MBQL: {where} needs a non-empty list of stages.")
        return [self.stage(s, i, where) for i, s in enumerate(stages)]

    def join(self, join: Any, i: int) -> Join:
        j = _keys(join, f"join {i}")
        where = f"join {j.get('alias', i)!r}"
        saved = self.aggregation_index
        stages = self.stages(j.get("stages"), where)
        self.aggregation_index = saved
        conditions = [self.clause(c, f"conditions of {where}") for c in _list(j.get("conditions") or [], where)]
        condition = None
        if conditions:
            condition = conditions[0] if len(conditions) == 1 else ["and", *conditions]
        return _join(j, stages, condition, where, lambda f, w: self.clause(f, w))


def _plain(opts: dict) -> dict:
    return {k: v for k, v in opts.items() if not k.startswith("lib/") and k not in ("ident", "effective-type")}


# --------------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------------

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
    outer = {(_key(k) if not str(k).startswith("lib/") else k): v for k, v in query.items()}
    database = outer.get("database")
    if isinstance(database, bool) or not isinstance(database, int):
        raise Invalid("Invalid MBQL: database must be an integer.")
    common = {
        "parameters": outer.get("parameters") or [],
        "constraints": _keys(outer.get("constraints"), "constraints") or None,
        "middleware": _keys(outer.get("middleware"), "middleware") or None,
        "settings": outer.get("settings"),
        "info": outer.get("info"),
    }
    if not isinstance(common["parameters"], list):
        raise Invalid("Invalid MBQL: parameters must be a list.")
    if outer.get("lib/type") == "mbql/query" or "stages" in outer:
        return Query(database=database, stages=_Pmbql().stages(outer.get("stages"), "query"), **common)
    kind = token(outer.get("type") or "")
    if kind == "query":
        if not isinstance(outer.get("query"), dict):
            raise Invalid("Invalid MBQL: a query of type \"query\" needs a \"query\" map.")
        return Query(database=database, stages=_Legacy().inner(outer["query"]), **common)
    if kind == "native":
        native = _keys(outer.get("native"), "native")
        if not isinstance(native.get("query"), str):
            raise Invalid("Invalid MBQL: a native query needs native.query, the SQL text.")
        return Query(database=database, stages=[Stage(native={"query": native["query"],
                                                                "template-tags": native.get("template-tags") or {}})],
                     **common)
    raise Invalid("Invalid MBQL: type must be \"query\" or \"native\", or the query must be MBQL 5 with stages.")
