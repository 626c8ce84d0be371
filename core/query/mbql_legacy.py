"""Legacy MBQL (the `query` map, pre-0.40 forms included) read into the canonical clause shape of
core.query.mbql; the pieces both dialects share are in core.query.mbql_parts.
"""
from __future__ import annotations

from typing import Any

from core.http.errors import Invalid

from . import mbql_parts as shared
from .model import Clause, Join, Stage


class LegacyReader:
    """Legacy clauses to the canonical shape, old forms included."""

    def ref(self, x: Any, where: str) -> Clause:
        """A field, expression or aggregation reference; bare integers are pre-0.30 field ids."""
        if isinstance(x, int) and not isinstance(x, bool):
            return shared.field_ref(x, {}, where)
        if not isinstance(x, list) or not x:
            raise Invalid(f"Invalid MBQL: expected a field reference in {where}, got {x!r}.")
        op = shared.token(x[0])
        args = x[1:]
        if op == "field":
            if len(args) not in (1, 2):
                raise Invalid(f"Invalid MBQL: malformed field clause {x!r} in {where}.")
            return shared.field_ref(args[0], shared.field_opts(args[1] if len(args) > 1 else None, where), where)
        if op == "field-id":
            return shared.field_ref(shared.integer(args[0] if args else None, f"field-id in {where}", 1), {}, where)
        if op == "field-literal":
            if len(args) < 2:
                raise Invalid(f"Invalid MBQL: malformed field-shared.literal {x!r} in {where}.")
            return shared.field_ref(args[0], {"base-type": args[1]}, where)
        if op == "fk->":
            if len(args) != 2:
                raise Invalid(f"Invalid MBQL: fk-> takes two fields, got {x!r} in {where}.")
            source, dest = self.ref(args[0], where), self.ref(args[1], where)
            if not isinstance(source[1], int):
                raise Invalid(f"Invalid MBQL: the source of fk-> in {where} must be a field id.")
            dest[2] = {**dest[2], "source-field": source[1]}
            return dest
        if op == "datetime-field":
            rest = [a for a in args[1:] if not (isinstance(a, str) and shared.token(a) == "as")]
            if len(args) < 2 or len(rest) != 1:
                raise Invalid(f"Invalid MBQL: malformed datetime-field {x!r} in {where}.")
            inner = self.ref(args[0], where)
            inner[2] = {**inner[2], **shared.field_opts({"temporal-unit": rest[0]}, where)}
            return inner
        if op == "binning-strategy":
            if len(args) < 2:
                raise Invalid(f"Invalid MBQL: malformed binning-strategy {x!r} in {where}.")
            inner = self.ref(args[0], where)
            strategy = shared.token(args[1])
            binning: dict = {"strategy": strategy}
            if strategy in ("num-bins", "bin-width") and len(args) > 2:
                binning[strategy] = args[2]
            inner[2] = {**inner[2], "binning": shared.binning_opts(binning, where)}
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
            return ["expression", args[0], shared.keys(args[1] if len(args) > 1 else None, where)]
        if op in ("aggregation", "aggregate-field"):
            return ["aggregation", shared.integer(args[0] if args else None, f"aggregation index in {where}", 0),
                    shared.keys(args[1] if len(args) > 1 else None, where)]
        raise Invalid(f"Invalid MBQL: expected a field reference in {where}, got {x!r}.")

    def expr(self, x: Any, where: str) -> Any:
        """Any expression: a shared.literal, a reference or a function clause."""
        if x is None or isinstance(x, (bool, int, float, str)):
            return x
        if isinstance(x, dict):
            raise Invalid(f"Invalid MBQL: unexpected map {x!r} in {where}.")
        if not isinstance(x, list) or not x:
            raise Invalid(f"Invalid MBQL: malformed clause {x!r} in {where}.")
        op = shared.token(x[0])
        if op in ("field", "field-id", "field-literal", "fk->", "datetime-field", "binning-strategy",
                  "joined-field", "expression", "aggregation", "aggregate-field"):
            return self.ref(x, where)
        args = x[1:]
        if op == "value":
            return ["value", shared.literal(args[0] if args else None, where),
                    shared.keys(args[1] if len(args) > 1 else None, where)]
        if op == "case" or op == "if":
            return self.case(args, where)
        if op == "aggregation-options" or op == "named":
            if not args:
                raise Invalid(f"Invalid MBQL: empty {op} in {where}.")
            if op == "named":
                opts = {"name": args[1]} if len(args) > 1 else {}
            else:
                opts = shared.keys(args[1] if len(args) > 1 else None, where)
            return ["aggregation-options", self.expr(args[0], where), opts]
        if op in shared.STRING_FILTERS:
            opts = {}
            if len(args) == 3 and isinstance(args[2], dict):
                opts = shared.keys(args[2], where)
                args = args[:2]
            return [op, *(self.expr(a, where) for a in args), opts]
        if op == "time-interval":
            if len(args) < 3:
                raise Invalid(f"Invalid MBQL: time-interval needs a field, an amount and a unit in {where}.")
            opts = shared.keys(args[3], where) if len(args) > 3 else {}
            return [op, self.ref(args[0], where), args[1], shared.token(args[2]), opts]
        if op in shared.UNIT_POSITIONS:
            return [op, *shared.unit_args(op, args, lambda a: self.expr(a, where))]
        if op == "count" and not args:
            return ["count"]
        if op == "offset":
            # Legacy offset takes its options first: ["offset", {name?}, expression, n].
            leading = bool(args) and isinstance(args[0], dict)
            opts = shared.keys(args[0], where) if leading else {}
            clause = ["offset", *(self.expr(a, where) for a in (args[1:] if leading else args))]
            names = {k: opts[k] for k in ("name", "display-name") if opts.get(k)}
            return ["aggregation-options", clause, names] if names else clause
        if op == "datetime" and len(args) == 2 and isinstance(args[1], dict):
            return [op, self.expr(args[0], where), shared.keys(args[1], where)]
        return [op, *(self.expr(a, where) for a in args)]

    def case(self, args: list, where: str) -> Clause:
        pairs = shared.case_pairs(args, where, self.expr)
        opts = shared.keys(args[1], where) if len(args) > 1 and isinstance(args[1], dict) else {}
        if "default" in opts:
            opts["default"] = self.expr(opts["default"], where)
        return ["case", pairs, opts]

    def order_by(self, x: Any) -> Clause:
        if isinstance(x, list) and len(x) == 2:
            first, second = x
            if isinstance(first, str) and shared.token(first) in ("asc", "desc"):
                return [shared.token(first), self.ref(second, "order-by")]
            if isinstance(second, str) and shared.token(second) in ("ascending", "descending"):
                return ["asc" if shared.token(second) == "ascending" else "desc", self.ref(first, "order-by")]
        raise Invalid(f"Invalid MBQL: malformed order-by clause {x!r}.")

    def inner(self, inner: Any, where: str = "query") -> list[Stage]:
        q = shared.keys(inner, where)
        if "source-table" in q and "source-query" in q:
            raise Invalid(f"Invalid MBQL: {where} has both source-table and source-query.")
        stages: list[Stage] = []
        stage = Stage()
        if "source-query" in q:
            source = shared.keys(q["source-query"], "source-query")
            if "native" in source:
                stages.append(Stage(native={"query": source["native"],
                                            "template-tags": source.get("template-tags") or {}}))
            else:
                stages.extend(self.inner(source, "source-query"))
        elif "source-table" in q:
            shared.source_table(q["source-table"], stage, f"source-table of {where}")
        else:
            raise Invalid(f"Invalid MBQL: {where} needs a source-table or a source-query.")
        self.fill(stage, q)
        stages.append(stage)
        return stages

    def fill(self, stage: Stage, q: dict) -> None:
        for i, join in enumerate(q.get("joins") or []):
            stage.joins.append(self.join(join, i))
        expressions = shared.keys(q.get("expressions"), "expressions") if "expressions" in q else {}
        # Expression names are user text: keep them as given, only the map shared.keys were normalised.
        raw_names = {shared.key(k): k for k in (q.get("expressions") or {})}
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
            stage.breakouts = [self.ref(b, "breakout") for b in shared.as_list(q["breakout"], "breakout")]
        if q.get("fields") is not None:
            stage.fields = [self.ref(f, "fields") for f in shared.as_list(q["fields"], "fields")]
        if q.get("order-by") is not None:
            stage.order_by = [self.order_by(o) for o in shared.as_list(q["order-by"], "order-by")]
        shared.limit_and_page(stage, q)
        stage.source_metadata = q.get("source-metadata")

    def join(self, join: Any, i: int) -> Join:
        j = shared.keys(join, f"join {i}")
        where = f"join {j.get('alias', i)!r}"
        if "source-table" not in j and "source-query" not in j:
            raise Invalid(f"Invalid MBQL: {where} needs a source-table or a source-query.")
        if "source-query" in j and "source-table" not in j:
            source = shared.keys(j["source-query"], f"source-query of {where}")
            if "native" in source:
                stages = [Stage(native={"query": source["native"], "template-tags": source.get("template-tags") or {}})]
            else:
                stages = self.inner(source, f"source-query of {where}")
        else:
            stages = self.inner({k: v for k, v in j.items() if k == "source-table"}, where)
        condition = self.expr(j.get("condition"), f"condition of {where}") if j.get("condition") is not None else None
        return shared.make_join(j, stages, condition, where, self.ref)
