"""Aggregations for the compiler: the SQL of each aggregation clause and the column Metabase reports
for it (name, display name, types); cumulative ones are running totals over the stage's window
(core.query.windows)."""
from __future__ import annotations

from sqlglot import exp

from core.driver.dialect import lit
from core.http.errors import Invalid

from .arity import check_clause
from .macros import METRIC_SOURCE
from .refs import Col

AGGREGATIONS = {"count", "cum-count", "sum", "avg", "min", "max", "distinct", "cum-sum", "stddev", "var",
                "median", "percentile", "share", "count-where", "sum-where", "distinct-where"}


class AggregationCompiler:
    """Mixed into the stage compiler: needs `value`, `filter`, `field_expr`, `infer_type`, `breakout_cols`."""

    def aggregation_column(self, clause, index: int) -> Col:
        names = {}
        check_clause(clause)
        if clause[0] == "aggregation-options":
            clause, names = clause[1], clause[2] if len(clause) > 2 and isinstance(clause[2], dict) else {}
            check_clause(clause)
        self.allow_aggregations = True
        try:
            sql = self.aggregate(clause) if clause[0] in AGGREGATIONS else self.value(clause)
        finally:
            self.allow_aggregations = False
        # A spliced-in metric is named and typed after its own aggregation (core.query.macros).
        name, display, base_type, semantic = self.aggregation_meta(names.get(METRIC_SOURCE) or clause)
        meta = {"name": names.get("name") or name,
                "display_name": names.get("display-name") or names.get("name") or display,
                "base_type": base_type, "effective_type": base_type, "semantic_type": semantic,
                "field_ref": ["aggregation", index], "source": "aggregation", "aggregation_index": index}
        return Col(alias=meta["name"], sql=sql, meta=meta, aggregation_index=index)

    def aggregate(self, clause) -> exp.Expression:
        check_clause(clause)
        op, args = clause[0], clause[1:]
        if op in ("count", "cum-count"):
            inner = exp.Count(this=self.value(args[0]) if args else exp.Star())
            return self.running_total(inner) if op == "cum-count" else inner
        if op == "metric":
            # core.query.macros replaces metrics before compiling; one left here was never expanded.
            raise Invalid(f"Invalid MBQL: metric {args[0]!r} was not expanded before compiling.")
        if not args:
            raise Invalid(f"Invalid MBQL: aggregation {op!r} needs an argument.")
        self.allow_aggregations = False
        try:
            if op in ("share", "count-where"):
                predicate = self.filter(args[0])
            elif op in ("sum-where", "distinct-where"):
                argument, predicate = self.value(args[0]), self.filter(args[1])
            else:
                argument = self.value(args[0])
        finally:
            self.allow_aggregations = True
        if op in ("sum", "cum-sum"):
            inner = exp.Sum(this=argument)
            return self.running_total(inner) if op == "cum-sum" else inner
        if op == "avg":
            return self.driver.average(argument)
        if op == "min":
            return exp.Min(this=argument)
        if op == "max":
            return exp.Max(this=argument)
        if op == "distinct":
            return exp.Count(this=exp.Distinct(expressions=[argument]))
        if op in ("stddev", "var"):
            self.context.require("standard-deviation-aggregations", f"the {op} aggregation")
            return self.driver.stddev(argument) if op == "stddev" else self.driver.variance(argument)
        if op in ("median", "percentile"):
            self.context.require("percentile-aggregations", f"the {op} aggregation")
            p = 0.5 if op == "median" else args[1]
            if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
                raise Invalid("Invalid MBQL: percentile needs a number between 0 and 1.")
            return self.driver.percentile(argument, p)
        if op == "share":
            matches = exp.Sum(this=exp.Case(ifs=[exp.If(this=predicate, true=lit(1))], default=lit(0)))
            return exp.Div(this=self.driver.to_float(matches),
                           expression=exp.Nullif(this=exp.Count(this=exp.Star()), expression=lit(0)))
        if op == "count-where":
            return exp.Count(this=exp.Case(ifs=[exp.If(this=predicate, true=lit(1))]))
        if op == "sum-where":
            return exp.Sum(this=exp.Case(ifs=[exp.If(this=predicate, true=argument)], default=lit(0)))
        if op == "distinct-where":
            return exp.Count(this=exp.Distinct(expressions=[exp.Case(ifs=[exp.If(this=predicate, true=argument)])]))
        raise Invalid(f"Invalid MBQL: unknown aggregation {op!r}.")

    def display_of(self, x) -> str:
        if isinstance(x, list) and x and x[0] == "field":
            return self.field_expr(x)[1].display_name
        if isinstance(x, list) and x and x[0] == "expression":
            return x[1]
        return "Expression"

    def aggregation_meta(self, clause) -> tuple[str, str, str, str | None]:
        op, args = clause[0], clause[1:]
        arg_type = self.infer_type(args[0]) if args and op not in ("share", "count-where") else None
        arg_semantic = None
        if args and isinstance(args[0], list) and args[0] and args[0][0] == "field":
            arg_semantic = self.field_expr(args[0])[1].semantic_type
        if op == "count":
            return "count", (f"Count of {self.display_of(args[0])}" if args else "Count"), "type/BigInteger", "type/Quantity"
        if op == "cum-count":
            return ("cum_count", (f"Cumulative count of {self.display_of(args[0])}" if args else "Cumulative count"),
                    "type/BigInteger", "type/Quantity")
        simple = {"avg": ("avg", "Average of"), "cum-sum": ("sum", "Cumulative sum of"),
                  "distinct": ("count", "Distinct values of"), "max": ("max", "Max of"),
                  "median": ("median", "Median of"), "min": ("min", "Min of"),
                  "stddev": ("stddev", "Standard deviation of"), "sum": ("sum", "Sum of"),
                  "var": ("var", "Variance of")}
        if op in simple:
            name, prefix = simple[op]
            if op == "distinct":
                return name, f"{prefix} {self.display_of(args[0])}", "type/BigInteger", "type/Quantity"
            if op in ("avg", "stddev", "var"):
                return name, f"{prefix} {self.display_of(args[0])}", "type/Float", arg_semantic if op == "avg" else None
            return name, f"{prefix} {self.display_of(args[0])}", arg_type, arg_semantic
        if op == "percentile":
            return "percentile", f"{args[1]}th percentile of {self.display_of(args[0])}", arg_type, arg_semantic
        if op == "share":
            return "share", "Share of rows matching condition", "type/Float", None
        if op == "count-where":
            return "count-where", "Count of rows matching condition", "type/BigInteger", "type/Quantity"
        if op == "sum-where":
            return (f"sum_where_{self.field_expr(args[0])[1].name}" if args[0][0] == "field" else "sum_where",
                    f"Sum of {self.display_of(args[0])} matching condition", arg_type, arg_semantic)
        if op == "distinct-where":
            return "count", f"Distinct values of {self.display_of(args[0])} matching condition", "type/BigInteger", "type/Quantity"
        if op == "offset":
            return "offset", "Offset", self.infer_type(clause), None
        return "expression", "Expression", self.infer_type(clause), None
