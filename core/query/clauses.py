"""Clauses to sqlglot AST for the compiler: selected columns, expressions, filters, aggregations.

Values become literals through `exp.convert`; relative and bucketed date filters become ranges
whose bounds are computed in Python from one clock (core.query.temporal) and rendered by the
driver's `temporal_literal`.
"""
from __future__ import annotations

import datetime as dt
import json

from sqlglot import exp

from ..errors import Invalid
from . import temporal
from .dialect import lit
from .refs import Col, Info, RefResolver, is_date, is_temporal

ARITHMETIC = {"+": exp.Add, "-": exp.Sub, "*": exp.Mul}
COMPARISONS = {"=": exp.EQ, "!=": exp.NEQ, "<": exp.LT, "<=": exp.LTE, ">": exp.GT, ">=": exp.GTE}
GET_UNITS = {"get-year": "year", "get-quarter": "quarter-of-year", "get-month": "month-of-year",
             "get-week": "week-of-year", "get-day": "day-of-month", "get-day-of-week": "day-of-week",
             "get-hour": "hour-of-day", "get-minute": "minute-of-hour", "get-second": "second"}
EXTRACT_UNITS = {"year-of-era": "year", "year": "year", "quarter-of-year": "quarter-of-year",
                 "month-of-year": "month-of-year", "week-of-year-iso": "week-of-year",
                 "week-of-year-us": "week-of-year", "week-of-year-instance": "week-of-year",
                 "week-of-year": "week-of-year", "day-of-month": "day-of-month", "day-of-week": "day-of-week",
                 "day-of-year": "day-of-year", "hour-of-day": "hour-of-day", "minute-of-hour": "minute-of-hour",
                 "second-of-minute": "second"}
UNARY_MATH = {"abs": exp.Abs, "floor": exp.Floor, "ceil": exp.Ceil, "round": exp.Round, "sqrt": exp.Sqrt,
              "exp": exp.Exp}
STRING_FUNCTIONS = {"upper": exp.Upper, "lower": exp.Lower, "length": exp.Length}
MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
               "October", "November", "December"]
DAY_NAMES = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
NOT_SUPPORTED = {"host", "domain", "subdomain", "path", "convert-timezone", "offset", "metric", "segment",
                 "split-part", "text", "integer", "float", "date", "today", "datetime"}
AGGREGATIONS = {"count", "cum-count", "sum", "avg", "min", "max", "distinct", "cum-sum", "stddev", "var",
                "median", "percentile", "share", "count-where", "sum-where", "distinct-where"}
FILTERS = {"and", "or", "not", "=", "!=", "<", "<=", ">", ">=", "between", "inside", "is-null", "not-null",
           "is-empty", "not-empty", "contains", "does-not-contain", "starts-with", "ends-with", "time-interval",
           "relative-time-interval", "during", "segment", "in", "not-in"}
STRING_TYPES = ("type/Text", "type/TextLike")


def _paren(e: exp.Expression) -> exp.Expression:
    return exp.Paren(this=e) if isinstance(e, (exp.Connector, exp.Not)) else e


class ClauseCompiler(RefResolver):
    def __init__(self, context, stage, source):
        super().__init__(context, stage, source)
        self.allow_aggregations = False
        self.breakout_cols: list[Col] = []

    # ---- selected columns -------------------------------------------------------------------------

    def ref_key(self, ref: list) -> tuple | None:
        if not isinstance(ref, list) or not ref:
            return None
        if ref[0] == "field":
            opts = ref[2]
            return ("field", ref[1], opts.get("join-alias"), opts.get("source-field"),
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
            col = Col(alias=meta["name"], sql=sql, meta=meta, ref_key=self.ref_key(ref), field_id=field_id,
                      unit=changes.get("unit"), binning=changes.get("binning_info"), join_alias=info.join_alias)
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
        ref_opts = {k: opts[k] for k in ("join-alias", "source-field") if opts.get(k) is not None}
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
            return raw, bucketed, info.base_type, unit if unit != "default" else None
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
        if op in NOT_SUPPORTED:
            raise Invalid(f"Invalid MBQL: the {op!r} clause is not supported.")
        if op in ARITHMETIC or op == "/":
            return self.arithmetic(op, args)
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
        if op in GET_UNITS:
            mode = args[1] if len(args) > 1 else None
            if op == "get-week" and mode not in (None, "iso"):
                raise Invalid(f"Invalid MBQL: get-week mode {mode!r} is not supported; ISO weeks are.")
            part = self.driver.extract_temporal(self.value(args[0]), GET_UNITS[op])
            if op == "get-day-of-week" and mode == "iso":
                # Monday 1 .. Sunday 7 from Sunday 1 .. Saturday 7.
                shifted = exp.Mod(this=exp.Paren(this=exp.Add(this=part, expression=lit(5))), expression=lit(7))
                return exp.Add(this=shifted, expression=lit(1))
            return part
        if op == "temporal-extract":
            unit = args[1]
            if unit in ("week-of-year-us", "week-of-year-instance"):
                raise Invalid(f"Invalid MBQL: temporal-extract {unit!r} is not supported; use week-of-year-iso.")
            if unit not in EXTRACT_UNITS:
                raise Invalid(f"Invalid MBQL: temporal-extract does not know the unit {unit!r}.")
            return self.driver.extract_temporal(self.value(args[0]), EXTRACT_UNITS[unit])
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
            return self.driver.temporal_literal(self.relative(args, None))
        raise Invalid(f"Invalid MBQL: unknown clause {op!r}.")

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

    # ---- filters ----------------------------------------------------------------------------------

    def filter(self, x) -> exp.Expression:
        if not isinstance(x, list) or not x:
            if isinstance(x, bool):
                return exp.Boolean(this=x)
            raise Invalid(f"Invalid MBQL: malformed filter {x!r}.")
        op, args = x[0], x[1:]
        if op in ("and", "or"):
            if not args:
                raise Invalid(f"Invalid MBQL: {op!r} needs at least one clause.")
            parts = [_paren(self.filter(a)) for a in args]
            return exp.Paren(this=(exp.and_ if op == "and" else exp.or_)(*parts)) if len(parts) > 1 else parts[0]
        if op == "not":
            negated = exp.Not(this=exp.Paren(this=self.filter(args[0])))
            inner = args[0]
            if isinstance(inner, list) and inner and inner[0] in ("contains", "starts-with", "ends-with"):
                # As Metabase: rows whose value is NULL match a negated string filter.
                column = self.value(inner[1])
                return exp.Paren(this=exp.or_(negated, exp.Is(this=column, expression=exp.Null())))
            return negated
        if op in ("in", "not-in"):
            return self.compare("=" if op == "in" else "!=", args)
        if op in COMPARISONS or op == "between":
            return self.compare(op, args)
        if op in ("is-null", "not-null", "is-empty", "not-empty"):
            return self.nullness(op, args[0])
        if op in ("contains", "does-not-contain", "starts-with", "ends-with"):
            return self.string_filter(op, args)
        if op == "time-interval":
            return self.time_interval(args)
        if op == "relative-time-interval":
            return self.relative_time_interval(args)
        if op == "during":
            return self.during(args)
        if op == "inside":
            if len(args) != 6:
                raise Invalid("Invalid MBQL: inside takes a latitude, a longitude and four bounds.")
            lat, lon, lat_max, lon_min, lat_min, lon_max = args
            return exp.and_(exp.Between(this=self.value(lat), low=lit(lat_min), high=lit(lat_max)),
                            exp.Between(this=self.value(lon), low=lit(lon_min), high=lit(lon_max)))
        if op == "segment":
            raise Invalid("Invalid MBQL: segments are not supported yet.")
        if op in ("field", "expression"):
            return exp.EQ(this=self.value(x), expression=exp.Boolean(this=True))
        return self.value(x)

    def nullness(self, op: str, ref) -> exp.Expression:
        value = self.value(ref)
        base_type = self.infer_type(ref)
        is_null = exp.Is(this=value, expression=exp.Null())
        if op == "is-null":
            return is_null
        if op == "not-null":
            return exp.Not(this=is_null)
        if base_type in STRING_TYPES:
            empty = exp.EQ(this=value.copy(), expression=lit(""))
            if op == "is-empty":
                return exp.Paren(this=exp.or_(is_null, empty))
            return exp.Paren(this=exp.and_(exp.Not(this=is_null), exp.NEQ(this=value.copy(), expression=lit(""))))
        return is_null if op == "is-empty" else exp.Not(this=is_null)

    def string_filter(self, op: str, args: list) -> exp.Expression:
        opts = args[2] if len(args) > 2 and isinstance(args[2], dict) else {}
        needle = args[1]
        if isinstance(needle, list) and needle and needle[0] == "value":
            needle = needle[1]
        if not isinstance(needle, str):
            raise Invalid(f"Invalid MBQL: {op} needs a string to look for.")
        value = self.value(args[0])
        case_sensitive = opts.get("case-sensitive", True) is not False
        kind = "contains" if op == "does-not-contain" else op
        match = self.driver.string_match(value, kind, needle, case_sensitive)
        if op == "does-not-contain":
            return exp.Paren(this=exp.or_(exp.Not(this=_paren(match)), exp.Is(this=value.copy(), expression=exp.Null())))
        return match

    def temporal_value(self, v, unit_hint: str | None):
        """A filter value as (Python date/datetime, its natural unit) or None when it is not temporal."""
        if isinstance(v, list) and v and v[0] == "value":
            v = v[1]
        if isinstance(v, str):
            parsed = temporal.parse(v)
            if parsed is None:
                return None
            return parsed, ("day" if not isinstance(parsed, dt.datetime) else None)
        if isinstance(v, list) and v and v[0] == "relative-datetime":
            unit = v[2] if len(v) > 2 else None
            return self.relative(v[1:], unit_hint), unit
        return None

    def relative(self, args: list, unit_hint: str | None) -> dt.datetime:
        amount = args[0]
        unit = args[1] if len(args) > 1 else None
        now = self.context.now
        if amount == "current" or amount == 0:
            return now
        if not isinstance(amount, int) or isinstance(amount, bool):
            raise Invalid(f"Invalid MBQL: relative-datetime needs an integer or \"current\", got {amount!r}.")
        if unit not in temporal.INTERVAL_UNITS:
            raise Invalid(f"Invalid MBQL: relative-datetime needs a unit, got {unit!r}.")
        return temporal.add(now, amount, unit)

    def bound(self, value, base_type: str) -> exp.Expression:
        value = temporal.as_datetime(value)
        if is_date(base_type) and value == temporal.truncate(value, "day"):
            return self.driver.temporal_literal(value.date())
        return self.driver.temporal_literal(value)

    def compare(self, op: str, args: list) -> exp.Expression:
        ref, values = args[0], list(args[1:])
        if not values:
            raise Invalid(f"Invalid MBQL: {op!r} needs a value to compare with.")
        if op == "between" and len(values) != 2:
            raise Invalid("Invalid MBQL: between takes a minimum and a maximum.")
        if op not in ("=", "!=", "between") and len(values) != 1:
            raise Invalid(f"Invalid MBQL: {op!r} compares with exactly one value.")
        if isinstance(ref, list) and ref and ref[0] in ("field", "expression"):
            raw, bucketed, base_type, unit = self.ref_with_info(ref)
            if is_temporal(base_type) and unit not in temporal.EXTRACTION_UNITS:
                parsed = [self.temporal_value(v, unit) for v in values]
                if all(p is not None for p in parsed):
                    return self.temporal_compare(op, raw, base_type, unit, parsed)
            left = bucketed
        else:
            left = self.value(ref)
        rights = [self.value(v) for v in values]
        if op == "between":
            return exp.Between(this=left, low=rights[0], high=rights[1])
        if op in ("=", "!="):
            nulls = [r for r in rights if isinstance(r, exp.Null)]
            rights = [r for r in rights if not isinstance(r, exp.Null)]
            parts = []
            if rights:
                parts.append(exp.EQ(this=left, expression=rights[0]) if len(rights) == 1
                             else exp.In(this=left, expressions=rights))
            if nulls:
                parts.append(exp.Is(this=left.copy(), expression=exp.Null()))
            positive = parts[0] if len(parts) == 1 else exp.Paren(this=exp.or_(*parts))
            if op == "=":
                return positive
            if nulls:
                return exp.Not(this=exp.Paren(this=positive))
            if len(rights) == 1:
                negative = exp.NEQ(this=left.copy(), expression=rights[0].copy())
                return exp.Paren(this=exp.or_(negative, exp.Is(this=left.copy(), expression=exp.Null())))
            # Metabase keeps rows whose value is NULL when filtering with !=.
            return exp.Paren(this=exp.or_(exp.Not(this=exp.Paren(this=positive)),
                                          exp.Is(this=left.copy(), expression=exp.Null())))
        return COMPARISONS[op](this=left, expression=rights[0])

    def temporal_compare(self, op: str, raw, base_type: str, unit: str | None, parsed: list) -> exp.Expression:
        column = self.driver.temporal_column(raw, base_type)
        ranges = []
        for value, natural_unit in parsed:
            bucket_unit = unit if unit in temporal.TRUNCATION_UNITS else natural_unit
            if bucket_unit:
                ranges.append(temporal.bucket(value, bucket_unit))
            else:
                exact = temporal.as_datetime(value)
                ranges.append((exact, None))

        def ge(v):
            return exp.GTE(this=column.copy(), expression=self.bound(v, base_type))

        def lt(v):
            return exp.LT(this=column.copy(), expression=self.bound(v, base_type))

        def within(lo, hi):
            if hi is None:
                return exp.EQ(this=column.copy(), expression=self.bound(lo, base_type))
            return exp.Paren(this=exp.and_(ge(lo), lt(hi)))

        if op == "between":
            (lo, _), (lo2, hi2) = ranges
            upper = lt(hi2) if hi2 is not None else exp.LTE(this=column.copy(), expression=self.bound(lo2, base_type))
            return exp.Paren(this=exp.and_(ge(lo), upper))
        lo, hi = ranges[0]
        if op in ("=", "!="):
            parts = [within(a, b) for a, b in ranges]
            positive = parts[0] if len(parts) == 1 else exp.Paren(this=exp.or_(*parts))
            if op == "=":
                return positive
            return exp.Paren(this=exp.or_(exp.Not(this=_paren(positive)),
                                          exp.Is(this=column.copy(), expression=exp.Null())))
        if hi is None:
            return COMPARISONS[op](this=column, expression=self.bound(lo, base_type))
        return {"<": lambda: lt(lo), "<=": lambda: lt(hi), ">": lambda: ge(hi), ">=": lambda: ge(lo)}[op]()

    def range_filter(self, ref, lo: dt.datetime, hi: dt.datetime) -> exp.Expression:
        raw, _, base_type, _ = self.ref_with_info(ref)
        if not is_temporal(base_type):
            raise Invalid("Invalid MBQL: a relative date filter needs a date or time column.")
        column = self.driver.temporal_column(raw, base_type)
        return exp.Paren(this=exp.and_(exp.GTE(this=column, expression=self.bound(lo, base_type)),
                                       exp.LT(this=column.copy(), expression=self.bound(hi, base_type))))

    def interval_bounds(self, anchor: dt.datetime, amount, unit: str, include_current: bool) -> tuple:
        if unit not in temporal.TRUNCATION_UNITS and unit != "second":
            raise Invalid(f"Invalid MBQL: {unit!r} is not a unit for a relative date filter.")
        if amount in ("current", 0):
            return temporal.bucket(anchor, unit)
        amount = {"last": -1, "next": 1}.get(amount, amount)
        if not isinstance(amount, int) or isinstance(amount, bool):
            raise Invalid(f"Invalid MBQL: time-interval needs an integer, \"current\", \"last\" or \"next\", got {amount!r}.")
        start = temporal.truncate(anchor, unit)
        if amount < 0:
            lo = temporal.add(start, amount, unit)
            hi = temporal.add(start, 1, unit) if include_current else start
        else:
            lo = start if include_current else temporal.add(start, 1, unit)
            hi = temporal.add(start, amount + 1, unit)
        return lo, hi

    def time_interval(self, args: list) -> exp.Expression:
        ref, amount, unit = args[0], args[1], args[2]
        opts = args[3] if len(args) > 3 and isinstance(args[3], dict) else {}
        lo, hi = self.interval_bounds(self.context.now, amount, unit, bool(opts.get("include-current")))
        return self.range_filter(ref, lo, hi)

    def relative_time_interval(self, args: list) -> exp.Expression:
        if len(args) != 5:
            raise Invalid("Invalid MBQL: relative-time-interval takes a column, an amount, a unit, an offset and its unit.")
        ref, amount, unit, offset, offset_unit = args
        if offset_unit not in temporal.INTERVAL_UNITS or not isinstance(offset, int):
            raise Invalid("Invalid MBQL: relative-time-interval needs an integer offset and its unit.")
        # Metabase buckets the clock by the interval's unit first, then shifts both bounds by the offset.
        lo, hi = self.interval_bounds(self.context.now, amount, unit, False)
        return self.range_filter(ref, temporal.add(lo, offset, offset_unit), temporal.add(hi, offset, offset_unit))

    def during(self, args: list) -> exp.Expression:
        if len(args) != 3:
            raise Invalid("Invalid MBQL: during takes a column, a date and a unit.")
        ref, value, unit = args
        parsed = temporal.parse(value) if isinstance(value, str) else None
        if parsed is None or unit not in temporal.TRUNCATION_UNITS:
            raise Invalid("Invalid MBQL: during needs an ISO date and a unit from minute to year.")
        lo, hi = temporal.bucket(parsed, unit)
        return self.range_filter(ref, lo, hi)

    # ---- aggregations -----------------------------------------------------------------------------

    def aggregation_column(self, clause, index: int) -> Col:
        names = {}
        if clause[0] == "aggregation-options":
            clause, names = clause[1], clause[2]
        self.allow_aggregations = True
        try:
            sql = self.aggregate(clause) if clause[0] in AGGREGATIONS else self.value(clause)
        finally:
            self.allow_aggregations = False
        name, display, base_type, semantic = self.aggregation_meta(clause)
        meta = {"name": names.get("name") or name,
                "display_name": names.get("display-name") or names.get("name") or display,
                "base_type": base_type, "effective_type": base_type, "semantic_type": semantic,
                "field_ref": ["aggregation", index], "source": "aggregation", "aggregation_index": index}
        return Col(alias=meta["name"], sql=sql, meta=meta, aggregation_index=index)

    def aggregate(self, clause) -> exp.Expression:
        op, args = clause[0], clause[1:]
        if op in ("count", "cum-count"):
            inner = exp.Count(this=self.value(args[0]) if args else exp.Star())
            return self.cumulative(inner) if op == "cum-count" else inner
        if op == "metric":
            raise Invalid("Invalid MBQL: metrics are not supported yet.")
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
            return self.cumulative(inner) if op == "cum-sum" else inner
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

    def cumulative(self, inner: exp.Expression) -> exp.Expression:
        """A running total over the breakouts: partitioned by all but the last, ordered by the last."""
        groups = [c.group_sql for c in self.breakout_cols]
        if not groups:
            return inner
        return exp.Window(
            this=exp.Sum(this=inner),
            partition_by=[g.copy() for g in groups[:-1]] or None,
            order=exp.Order(expressions=[exp.Ordered(this=groups[-1].copy(), nulls_first=True)]),
            spec=exp.WindowSpec(kind="ROWS", start="UNBOUNDED", start_side="PRECEDING", end="CURRENT ROW"))

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
        return "expression", "Expression", self.infer_type(clause), None

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
            return "type/Integer" if unit in temporal.EXTRACTION_UNITS else info.base_type
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
        if op in ("floor", "ceil", "round", "length", "datetime-diff") or op in GET_UNITS or op == "temporal-extract":
            return "type/Integer"
        if op in ("upper", "lower", "trim", "ltrim", "rtrim", "concat", "substring", "replace",
                  "regex-match-first", "month-name", "day-name", "quarter-name"):
            return "type/Text"
        if op in ("datetime-add", "datetime-subtract"):
            return self.infer_type(args[0])
        if op in ("now", "relative-datetime"):
            return "type/DateTime"
        if op == "coalesce":
            return self.infer_type(args[0])
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
