"""Clauses to sqlglot AST for the compiler: selected columns and their metadata, expressions, types.

Filters live in core.query.filters and aggregations in core.query.aggregations, both mixed into
ClauseCompiler. Values become literals through `exp.convert`.
"""
from __future__ import annotations

import json

from sqlglot import exp

from core.driver.dialect import SUNDAY, lit
from core.http.errors import Invalid

from . import temporal
from .aggregations import AGGREGATIONS, AggregationCompiler
from .arity import check_clause
from .filters import FilterCompiler
from .functions import FUNCTIONS, FunctionCompiler
from .refs import Col, Info, RefResolver, is_temporal, week_of_year, week_of_year_from_january
from .windows import WindowCompiler

ARITHMETIC = {"+": exp.Add, "-": exp.Sub, "*": exp.Mul}
# Metabase's sugar for temporal-extract: (operator, mode) -> unit. get-week is ISO unless told otherwise.
GET_UNITS = {("get-year", None): "year-of-era", ("get-quarter", None): "quarter-of-year",
             ("get-month", None): "month-of-year", ("get-week", None): "week-of-year-iso",
             ("get-week", "iso"): "week-of-year-iso", ("get-week", "us"): "week-of-year-us",
             ("get-week", "instance"): "week-of-year-instance", ("get-day", None): "day-of-month",
             ("get-day-of-week", None): "day-of-week", ("get-day-of-week", "iso"): "day-of-week-iso",
             ("get-hour", None): "hour-of-day", ("get-minute", None): "minute-of-hour",
             ("get-second", None): "second-of-minute"}
GET_OPERATORS = {op for op, _ in GET_UNITS}
EXTRACT_UNITS = {"year-of-era": "year", "year": "year", "quarter-of-year": "quarter-of-year",
                 "month-of-year": "month-of-year", "week-of-year-iso": "week-of-year",
                 "day-of-month": "day-of-month", "day-of-year": "day-of-year", "hour-of-day": "hour-of-day",
                 "minute-of-hour": "minute-of-hour", "second-of-minute": "second"}
# Day-of-week units and the weekday each counts as 1 (None: the start-of-week setting's day).
DAY_OF_WEEK_UNITS = {"day-of-week": None, "day-of-week-iso": 0}
UNARY_MATH = {"abs": exp.Abs, "floor": exp.Floor, "ceil": exp.Ceil, "round": exp.Round, "sqrt": exp.Sqrt,
              "exp": exp.Exp}
# Declared type/Integer (infer_type), so their values are cast to the engine's integer: engines answer
# them in the argument's type otherwise (27.0 from a double on PostgreSQL and DuckDB).
WHOLE_NUMBER_MATH = {"floor", "ceil", "round"}
STRING_FUNCTIONS = {"upper": exp.Upper, "lower": exp.Lower, "length": exp.Length}
MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
               "October", "November", "December"]
DAY_NAMES = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
FILTERS = {"and", "or", "not", "=", "!=", "<", "<=", ">", ">=", "between", "inside", "is-null", "not-null",
           "is-empty", "not-empty", "contains", "does-not-contain", "starts-with", "ends-with", "time-interval",
           "relative-time-interval", "during", "segment", "in", "not-in"}


class ClauseCompiler(FilterCompiler, AggregationCompiler, FunctionCompiler, WindowCompiler, RefResolver):
    def __init__(self, context, stage, source):
        super().__init__(context, stage, source)
        self.allow_aggregations = False
        self.breakout_cols: list[Col] = []
        # id(column) -> the remapped column that an order-by on it sorts by instead (core.query.remaps).
        self.remapped: dict[int, Col] = {}

    # ---- selected columns -------------------------------------------------------------------------

    def ref_key(self, ref: list) -> tuple | None:
        if not isinstance(ref, list) or not ref:
            return None
        if ref[0] == "field":
            opts = ref[2]
            return ("field", ref[1], opts.get("join-alias"), (opts.get("source-field"), opts.get("source-field-join-alias")),
                    opts.get("temporal-unit") if opts.get("temporal-unit") != "default" else None,
                    json.dumps(opts.get("binning"), sort_keys=True) if opts.get("binning") else None)
        if ref[0] == "expression":
            return ("expression", ref[1], ref[2].get("temporal-unit"))
        return None

    def column_for(self, ref: list, source: str, breakout: bool = False) -> Col:
        kind = ref[0]
        if kind == "field":
            raw, info = self.field_expr(ref)
            sql, changes = self.bucket(raw, info, ref[2])
            meta = self.field_meta(ref, info, changes, source)
            field_id = info.upstream.field_id if info.upstream is not None else (info.field.id if info.field else None)
            # A converted column keeps its converted type for the next stage (an extracted part is an integer).
            value_type = info.value_type and ("type/Integer" if changes.get("effective_type") == "type/Integer"
                                              else info.value_type)
            col = Col(alias=meta["name"], sql=sql, meta=meta, ref_key=self.ref_key(ref), field_id=field_id,
                      unit=changes.get("unit"), binning=changes.get("binning_info"), join_alias=info.join_alias,
                      value_type=value_type)
        elif kind == "expression":
            name, opts = ref[1], ref[2]
            sql = self.expression_sql(name)
            base_type = self.infer_type(self.expression_definition(name))
            meta = {"name": name, "display_name": name, "base_type": base_type, "effective_type": base_type,
                    "semantic_type": None, "field_ref": ["expression", name], "source": source,
                    "expression_name": name}
            unit = opts.get("temporal-unit")
            if unit and unit != "default" and is_temporal(base_type):
                sql = self.temporal_bucket(sql, unit, base_type)
                meta.update(unit=unit, display_name=f"{name}: {temporal.humanize(unit)}",
                            field_ref=["expression", name, {"temporal-unit": unit}])
            col = Col(alias=name, sql=sql, meta=meta, ref_key=self.ref_key(ref), unit=meta.get("unit"))
        else:
            raise Invalid(f"Invalid MBQL: {kind!r} cannot be selected as a column here.")
        if breakout:
            col.group_sql = col.sql.copy()
        return col

    def field_meta(self, ref: list, info: Info, changes: dict, source: str) -> dict:
        opts = ref[2]
        meta: dict = {
            "name": info.name,
            "display_name": changes.get("display_name", info.display_name),
            "base_type": info.base_type,
            "effective_type": changes.get("effective_type", info.effective_type or info.base_type),
            "semantic_type": info.semantic_type,
        }
        ref_opts = {k: opts[k] for k in ("join-alias", "source-field", "source-field-join-alias")
                    if opts.get(k) is not None}
        # A unit applied in an earlier stage is reported (`unit`) but is not part of this stage's ref.
        if changes.get("applied_unit") or (changes.get("unit") == "default" and info.upstream is None):
            ref_opts["temporal-unit"] = changes["unit"]
        if info.upstream is not None:
            upstream = info.upstream.meta
            for key in ("id", "table_id", *("description", "database_type", "coercion_strategy", "visibility_type",
                                            "fingerprint", "settings", "fk_target_field_id")):
                if key in upstream:
                    meta[key] = upstream[key]
            ref_opts.pop("join-alias", None)
            field_ref = ["field", info.upstream.alias, {"base-type": info.base_type, **ref_opts}]
        else:
            f = info.field
            meta["id"] = f.id
            meta["table_id"] = f.table_id
            for key in ("description", "database_type", "coercion_strategy", "visibility_type", "fingerprint",
                        "settings", "nfc_path", "parent_id", "fk_target_field_id", "position"):
                meta[key] = getattr(f, key)
            if "binning_info" in changes:
                b = changes["binning_info"]
                ref_opts["binning"] = {"strategy": b["binning_strategy"], "min-value": b["min_value"],
                                       "max-value": b["max_value"], "num-bins": b["num_bins"],
                                       "bin-width": b["bin_width"]}
            field_ref = ["field", f.id, ref_opts or None]
        meta["field_ref"] = field_ref
        meta["source"] = source
        if "unit" in changes:
            meta["unit"] = changes["unit"]
        if "binning_info" in changes:
            meta["binning_info"] = changes["binning_info"]
        if info.fk_field is not None:
            meta["fk_field_id"] = info.fk_field.id
        if info.join_alias:
            meta["source_alias"] = info.join_alias
        return meta

    # ---- expressions ------------------------------------------------------------------------------

    def expression_definition(self, name: str):
        if name not in self.expressions:
            raise Invalid(f"Invalid MBQL: no expression named {name!r}.")
        return self.expressions[name]

    def expression_sql(self, name: str) -> exp.Expression:
        definition = self.expression_definition(name)
        if name in self._expanding:
            raise Invalid(f"Invalid MBQL: expression {name!r} refers to itself.")
        self._expanding.add(name)
        try:
            return self.value(definition)
        finally:
            self._expanding.discard(name)

    def ref_with_info(self, x) -> tuple[exp.Expression, exp.Expression, str, str | None]:
        """A reference's raw SQL, bucketed SQL, base type and temporal unit."""
        if x[0] == "field":
            raw, info = self.field_expr(x)
            bucketed, changes = self.bucket(raw, info, x[2])
            unit = changes.get("unit")
            return raw, bucketed, info.sql_type, unit if unit != "default" else None
        if x[0] == "expression":
            raw = self.expression_sql(x[1])
            base_type = self.infer_type(self.expression_definition(x[1]))
            unit = x[2].get("temporal-unit")
            if unit and unit != "default" and is_temporal(base_type):
                return raw, self.temporal_bucket(raw, unit, base_type), base_type, unit
            return raw, raw, base_type, None
        raise Invalid(f"Invalid MBQL: expected a field or expression, got {x[0]!r}.")

    def value(self, x) -> exp.Expression:
        """Any MBQL expression as SQL."""
        if x is None:
            return exp.Null()
        if isinstance(x, bool):
            return exp.Boolean(this=x)
        if isinstance(x, (int, float, str)):
            return lit(x)
        check_clause(x)
        op, args = x[0], x[1:]
        if op in ("field", "expression"):
            return self.ref_with_info(x)[1]
        if op == "value":
            return self.value(args[0])
        if op == "aggregation":
            raise Invalid("Invalid MBQL: an aggregation reference may only appear in order-by.")
        if op in AGGREGATIONS:
            if not self.allow_aggregations:
                raise Invalid(f"Invalid MBQL: aggregation {op!r} is only allowed in the aggregation clause.")
            return self.aggregate(x)
        if op in FILTERS:
            return self.filter(x)
        if op == "offset":
            return self.offset(args)
        if op in FUNCTIONS:
            return self.function(op, args)
        if op in ARITHMETIC or op == "/":
            return self.arithmetic(op, args)
        if op in WHOLE_NUMBER_MATH:
            return self.driver.to_integer(UNARY_MATH[op](this=self.value(args[0])))
        if op in UNARY_MATH:
            return UNARY_MATH[op](this=self.value(args[0]))
        if op == "power":
            return exp.Pow(this=self.value(args[0]), expression=self.value(args[1]))
        if op == "log":
            return self.driver.log10(self.value(args[0]))
        if op in STRING_FUNCTIONS:
            return STRING_FUNCTIONS[op](this=self.value(args[0]))
        if op in ("trim", "ltrim", "rtrim"):
            position = {"trim": None, "ltrim": "LEADING", "rtrim": "TRAILING"}[op]
            return exp.Trim(this=self.value(args[0]), position=position)
        if op == "concat":
            return exp.Concat(expressions=[self.value(a) for a in args], safe=False)
        if op == "substring":
            start = self.value(args[1])
            length = self.value(args[2]) if len(args) > 2 else None
            return exp.Substring(this=self.value(args[0]), start=start, length=length)
        if op == "replace":
            return exp.Anonymous(this="REPLACE", expressions=[self.value(a) for a in args[:3]])
        if op == "regex-match-first":
            self.context.require("regex", "regex-match-first")
            if not isinstance(args[1], str):
                raise Invalid("Invalid MBQL: regex-match-first needs a literal pattern.")
            return self.driver.regex_match_first(self.value(args[0]), args[1])
        if op == "coalesce":
            values = [self.value(a) for a in args]
            return exp.Coalesce(this=values[0], expressions=values[1:])
        if op == "case":
            pairs, opts = args[0], args[1] if len(args) > 1 else {}
            ifs = [exp.If(this=self.filter(cond), true=self.value(val)) for cond, val in pairs]
            default = self.value(opts["default"]) if "default" in opts else None
            return exp.Case(ifs=ifs, default=default)
        if op in GET_OPERATORS:
            mode = args[1] if len(args) > 1 else None
            if (op, mode) not in GET_UNITS:
                raise Invalid(f"Invalid MBQL: {op} does not take the mode {mode!r}.")
            return self.temporal_extract(self.value(args[0]), GET_UNITS[op, mode])
        if op == "temporal-extract":
            unit = args[1]
            if not isinstance(unit, str):
                raise Invalid(f"Invalid MBQL: temporal-extract needs a unit name, got {unit!r}.")
            return self.temporal_extract(self.value(args[0]), unit)
        if op in ("datetime-add", "datetime-subtract"):
            if len(args) != 3 or args[2] not in temporal.INTERVAL_UNITS:
                raise Invalid(f"Invalid MBQL: {op} takes a value, an amount and a unit.")
            amount = args[1]
            if op == "datetime-subtract":
                amount = -amount if isinstance(amount, (int, float)) else ["*", amount, -1]
            return self.driver.date_add(self.value(args[0]), self.value(amount), args[2])
        if op == "datetime-diff":
            return self.datetime_diff(args)
        if op == "now":
            return self.driver.now()
        if op == "month-name":
            return self.names(args[0], MONTH_NAMES, 1)
        if op == "day-name":
            return self.names(args[0], DAY_NAMES, 1)
        if op == "quarter-name":
            return self.names(args[0], ["Q1", "Q2", "Q3", "Q4"], 1)
        if op == "relative-datetime":
            return self.driver.temporal_literal(self.relative(args))
        raise Invalid(f"Invalid MBQL: unknown clause {op!r}.")

    def temporal_extract(self, value: exp.Expression, unit: str) -> exp.Expression:
        """A temporal-extract unit of value. Week numbers and days of the week follow Metabase: ISO
        weeks ignore the start-of-week setting, US weeks start on Sunday, instance weeks and
        day-of-week on the setting's day, and week-of-year is the week-of-year bucket."""
        week_start = self.context.week_start
        if unit == "week-of-year":
            return week_of_year(self.driver, value, week_start)
        if unit in ("week-of-year-us", "week-of-year-instance"):
            return week_of_year_from_january(self.driver, value, SUNDAY if unit == "week-of-year-us" else week_start)
        if unit in DAY_OF_WEEK_UNITS:
            first = DAY_OF_WEEK_UNITS[unit]
            return self.driver.extract_temporal(value, "day-of-week", week_start if first is None else first)
        if unit not in EXTRACT_UNITS:
            raise Invalid(f"Invalid MBQL: temporal-extract does not know the unit {unit!r}.")
        return self.driver.extract_temporal(value, EXTRACT_UNITS[unit])

    def datetime_diff(self, args: list) -> exp.Expression:
        """Whole units from start to end as Metabase counts them: calendar units compare dates (a month
        is complete when the day of month is reached), clock units truncate seconds toward zero."""
        if len(args) != 3 or args[2] not in ("year", "quarter", "month", "week", "day", "hour", "minute", "second"):
            raise Invalid("Invalid MBQL: datetime-diff takes a start, an end and a unit from second to year.")
        start, end, unit = self.value(args[0]), self.value(args[1]), args[2]
        driver = self.driver
        if unit in ("hour", "minute", "second"):
            seconds = driver.seconds_between(start, end)
            return _toward_zero(seconds, {"hour": 3600, "minute": 60, "second": 1}[unit])
        days = driver.days_between(start, end)
        if unit in ("day", "week"):
            return _toward_zero(days, 1 if unit == "day" else 7)

        def part(value, name):
            return driver.extract_temporal(value.copy(), name)

        raw = exp.Add(
            this=exp.Mul(this=exp.Paren(this=exp.Sub(this=part(end, "year"), expression=part(start, "year"))),
                         expression=lit(12)),
            expression=exp.Paren(this=exp.Sub(this=part(end, "month-of-year"), expression=part(start, "month-of-year"))))
        end_day, start_day = part(end, "day-of-month"), part(start, "day-of-month")
        months = exp.Case(ifs=[
            exp.If(this=exp.and_(exp.GTE(this=days.copy(), expression=lit(0)), exp.LT(this=end_day, expression=start_day)),
                   true=exp.Sub(this=raw.copy(), expression=lit(1))),
            exp.If(this=exp.and_(exp.LT(this=days.copy(), expression=lit(0)),
                                 exp.GT(this=end_day.copy(), expression=start_day.copy())),
                   true=exp.Add(this=raw.copy(), expression=lit(1)))], default=raw)
        return _toward_zero(months, {"month": 1, "quarter": 3, "year": 12}[unit])

    def names(self, arg, names: list[str], first: int) -> exp.Expression:
        value = self.value(arg)
        return exp.Case(ifs=[exp.If(this=exp.EQ(this=value.copy(), expression=lit(i + first)), true=lit(name))
                             for i, name in enumerate(names)])

    def arithmetic(self, op: str, args: list) -> exp.Expression:
        if len(args) < 2:
            raise Invalid(f"Invalid MBQL: {op!r} needs at least two arguments.")
        if op in ("+", "-") and any(isinstance(a, list) and a and a[0] == "interval" for a in args[1:]):
            result = self.value(args[0])
            for a in args[1:]:
                if not (isinstance(a, list) and a[0] == "interval"):
                    raise Invalid("Invalid MBQL: only intervals can be added to a date.")
                amount = a[1] if op == "+" else -a[1]
                result = self.driver.date_add(result, lit(amount), a[2])
            return result
        result = self.value(args[0])
        for a in args[1:]:
            right = self.value(a)
            if op == "/":
                result = exp.Div(this=self.driver.to_float(_paren_arith(result)),
                                 expression=exp.Nullif(this=right, expression=lit(0)))
            else:
                result = ARITHMETIC[op](this=_paren_arith(result), expression=_paren_arith(right))
        return result

    # ---- types ------------------------------------------------------------------------------------

    def infer_type(self, x) -> str:
        if x is None:
            return "type/*"
        if isinstance(x, bool):
            return "type/Boolean"
        if isinstance(x, int):
            return "type/Integer"
        if isinstance(x, float):
            return "type/Float"
        if isinstance(x, str):
            return "type/Text"
        op, args = x[0], x[1:]
        if op == "field":
            info = self.field_expr(x)[1]
            unit = x[2].get("temporal-unit")
            return "type/Integer" if unit in temporal.EXTRACTION_UNITS else info.sql_type
        if op == "expression":
            return self.infer_type(self.expression_definition(x[1]))
        if op == "value":
            return self.infer_type(args[0])
        if op in FILTERS:
            return "type/Boolean"
        if op in ("count", "cum-count", "distinct", "count-where", "distinct-where"):
            return "type/BigInteger"
        if op in ("avg", "stddev", "var", "share", "/", "sqrt", "exp", "log", "power"):
            return "type/Float"
        if op in ("sum", "cum-sum", "min", "max", "median", "percentile", "sum-where", "abs"):
            return self.infer_type(args[0])
        if op in ("+", "-", "*"):
            types = [self.infer_type(a) for a in args if not (isinstance(a, list) and a and a[0] == "interval")]
            if types and is_temporal(types[0]):
                return types[0]
            return "type/Float" if any(t in ("type/Float", "type/Decimal") for t in types) else "type/Integer"
        if op in ("floor", "ceil", "round", "length", "datetime-diff") or op in GET_OPERATORS or op == "temporal-extract":
            return "type/Integer"
        if op in ("upper", "lower", "trim", "ltrim", "rtrim", "concat", "substring", "replace",
                  "regex-match-first", "month-name", "day-name", "quarter-name"):
            return "type/Text"
        if op in ("datetime-add", "datetime-subtract"):
            return self.infer_type(args[0])
        if op in ("now", "relative-datetime"):
            return "type/DateTime"
        if op in ("coalesce", "offset"):
            return self.infer_type(args[0])
        if op in FUNCTIONS:
            return self.function_type(op, args)
        if op == "case":
            pairs = args[0]
            return self.infer_type(pairs[0][1]) if pairs else "type/*"
        return "type/*"


def _toward_zero(value: exp.Expression, divisor: int) -> exp.Expression:
    """value / divisor as an integer truncated toward zero, the same on every engine."""
    if divisor != 1:
        value = exp.Div(this=exp.Cast(this=exp.Paren(this=value), to=exp.DataType.build("double")),
                        expression=lit(float(divisor)))
    truncated = exp.Case(ifs=[exp.If(this=exp.GTE(this=value.copy(), expression=lit(0)),
                                     true=exp.Floor(this=value.copy()))], default=exp.Ceil(this=value.copy()))
    return exp.Cast(this=truncated, to=exp.DataType.build("bigint"))


def _paren_arith(e: exp.Expression) -> exp.Expression:
    return exp.Paren(this=e) if isinstance(e, (exp.Binary, exp.Connector)) and not isinstance(e, exp.Div) else e
