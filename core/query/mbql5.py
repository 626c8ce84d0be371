"""MBQL 5 (pMBQL: `stages`, clauses as [op, options, *args]) read into the canonical clause shape of
core.query.mbql; the pieces both dialects share are in core.query.mbql_parts.
"""
from __future__ import annotations

from typing import Any

from core.http.errors import Invalid

from . import mbql_parts as shared
from .model import Clause, Join, Stage


class Mbql5Reader:
    """MBQL 5 clauses ([op, opts, *args]) to the canonical legacy shape."""

    def __init__(self):
        self.aggregation_index: dict[str, int] = {}

    def clause(self, x: Any, where: str) -> Any:
        if x is None or isinstance(x, (bool, int, float, str)):
            return x
        if not isinstance(x, list) or not x:
            raise Invalid(f"Invalid MBQL: malformed clause {x!r} in {where}.")
        op = shared.token(x[0])
        if len(x) < 2 or not isinstance(x[1], dict):
            raise Invalid(f"Invalid MBQL: clause {op!r} in {where} needs an options map as its second element.")
        opts = shared.keys(x[1], f"options of {op}")
        args = x[2:]
        if op == "field":
            if len(args) != 1:
                raise Invalid(f"Invalid MBQL: malformed field clause in {where}.")
            return shared.field_ref(args[0], shared.field_opts(opts, where), where)
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
            return ["value", shared.literal(args[0] if args else None, where), _plain(opts)]
        if op in ("case", "if"):
            pairs = shared.case_pairs(args, where, self.clause)
            out_opts = {}
            if len(args) > 1:
                out_opts["default"] = self.clause(args[1], where)
            return ["case", pairs, out_opts]
        if op in shared.STRING_FILTERS:
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
            return [op, self.clause(args[0], where), args[1], shared.token(args[2]),
                    {k: v for k, v in opts.items() if k == "include-current"}]
        if op in shared.UNIT_POSITIONS:
            return [op, *shared.unit_args(op, args, lambda a: self.clause(a, where))]
        if op in ("asc", "desc"):
            return [op, self.clause(args[0], where)]
        if op == "datetime":
            mode = {k: v for k, v in opts.items() if k == "mode"}
            return [op, *(self.clause(a, where) for a in args), *([mode] if mode else [])]
        out = [op, *(self.clause(a, where) for a in args)]
        return out

    def aggregation(self, x: Any, i: int) -> Clause:
        clause = self.clause(x, "aggregation")
        opts = shared.keys(x[1], "aggregation options") if isinstance(x, list) and len(x) > 1 else {}
        names = {k: opts[k] for k in ("name", "display-name") if opts.get(k)}
        return ["aggregation-options", clause, names] if names else clause

    def stage(self, s: Any, i: int, where: str) -> Stage:
        q = shared.keys(s, f"stage {i} of {where}")
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
            shared.source_table(q["source-table"], stage, f"source-table of {where}")
        if "source-card" in q:
            stage.source_card = shared.integer(q["source-card"], f"source-card of {where}", 1)
        self.aggregation_index = {}
        for j, join in enumerate(q.get("joins") or []):
            stage.joins.append(self.join(join, j))
        for e in shared.as_list(q.get("expressions") or [], "expressions"):
            opts = shared.keys(e[1], "expression options") if isinstance(e, list) and len(e) > 1 else {}
            name = opts.get("lib/expression-name")
            if not isinstance(name, str) or not name:
                raise Invalid("Invalid MBQL: an expression in an MBQL 5 stage needs lib/expression-name.")
            stage.expressions[name] = self.clause(e, f"expression {name!r}")
        stage.filters = [self.clause(f, "filters") for f in shared.as_list(q.get("filters") or [], "filters")]
        for j, a in enumerate(shared.as_list(q.get("aggregation") or [], "aggregation")):
            if isinstance(a, list) and len(a) > 1 and isinstance(a[1], dict) and a[1].get("lib/uuid"):
                self.aggregation_index[a[1]["lib/uuid"]] = j
            stage.aggregations.append(self.aggregation(a, j))
        stage.breakouts = [self.clause(b, "breakout") for b in shared.as_list(q.get("breakout") or [], "breakout")]
        if q.get("fields") is not None:
            stage.fields = [self.clause(f, "fields") for f in shared.as_list(q["fields"], "fields")]
        stage.order_by = [self.clause(o, "order-by") for o in shared.as_list(q.get("order-by") or [], "order-by")]
        for o in stage.order_by:
            if o[0] not in ("asc", "desc"):
                raise Invalid(f"Invalid MBQL: order-by takes asc or desc clauses, got {o[0]!r}.")
        shared.limit_and_page(stage, q)
        return stage

    def stages(self, stages: Any, where: str) -> list[Stage]:
        if not isinstance(stages, list) or not stages:
            raise Invalid(f"Invalid MBQL: {where} needs a non-empty list of stages.")
        return [self.stage(s, i, where) for i, s in enumerate(stages)]

    def join(self, join: Any, i: int) -> Join:
        j = shared.keys(join, f"join {i}")
        where = f"join {j.get('alias', i)!r}"
        saved = self.aggregation_index
        stages = self.stages(j.get("stages"), where)
        self.aggregation_index = saved
        conditions = [self.clause(c, f"conditions of {where}")
                      for c in shared.as_list(j.get("conditions") or [], where)]
        condition = None
        if conditions:
            condition = conditions[0] if len(conditions) == 1 else ["and", *conditions]
        return shared.make_join(j, stages, condition, where, lambda f, w: self.clause(f, w))


def _plain(opts: dict) -> dict:
    return {k: v for k, v in opts.items() if not k.startswith("lib/") and k not in ("ident", "effective-type")}
