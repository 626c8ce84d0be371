"""Sources and references for the compiler: tables, previous stages, joins, implicit FK joins, and
field references resolved to column expressions plus the metadata Metabase reports for them.

Names in the AST come only from Table and Field rows looked up by id in the app DB (or from the
aliases the compiler itself gave the previous stage's columns).
"""
from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

from sqlalchemy import select as sa_select
from sqlglot import exp

from core.appdb.models.database import Field, Table
from core.driver.dialect import SUNDAY, lit
from core.http.errors import Invalid

from . import temporal
from .coercion import coerce
from .model import MAX_BINS

TEMPORAL_TYPES = ("type/Date", "type/DateTime", "type/Time", "type/DateTimeWithTZ", "type/DateTimeWithLocalTZ",
                  "type/DateTimeWithZoneOffset", "type/DateTimeWithZoneID", "type/TimeWithTZ",
                  "type/TimeWithLocalTZ", "type/TimeWithZoneOffset", "type/Instant")
NUMERIC_TYPES = ("type/Integer", "type/BigInteger", "type/Float", "type/Decimal", "type/Number")
HIDDEN_VISIBILITY = ("sensitive", "retired")
FIELD_META_KEYS = ("description", "database_type", "coercion_strategy", "visibility_type", "fingerprint",
                   "settings", "nfc_path", "parent_id", "fk_target_field_id", "position")
BREAKOUT_BINS = 8          # Metabase's breakout-bins-num setting
COORDINATE_BIN_WIDTH = 10.0  # Metabase's breakout-bin-width setting


def is_temporal(base_type: str | None) -> bool:
    return bool(base_type) and base_type in TEMPORAL_TYPES


def is_date(base_type: str | None) -> bool:
    return base_type == "type/Date"


def humanize_name(name: str) -> str:
    words = name.replace("_", " ").replace("-", " ").split()
    return " ".join(w.capitalize() for w in words) or name


def field_display_name(f: Field) -> str:
    return f.display_name or humanize_name(f.name)


@dataclass
class Context:
    session: Any
    driver: Any
    database_id: int
    now: dt.datetime
    # The start-of-week setting as a Python weekday (6 = Sunday): week buckets, day-of-week numbers and
    # relative week filters follow it, as Metabase's do.
    week_start: int = SUNDAY
    _fields: dict = dc_field(default_factory=dict)
    _tables: dict = dc_field(default_factory=dict)
    # Native source stages (from native cards and persisted models) by placeholder (core.query.cards).
    natives: dict = dc_field(default_factory=dict)
    # Adds the columns of external remappings to the query's own stages (core.query.remaps); None: off.
    remapper: Any = None
    # compile_stages(context, stages) of core.query.compiler, which imports this module: a join's own
    # stages are compiled through it.
    compile_stages: Any = None
    # The viewer's row and column restrictions (core.query.restrictions.RowPolicy), None: none; and the
    # restricted tables compiled so far.
    row_policy: Any = None
    restricted: dict = dc_field(default_factory=dict)

    def prefetch(self, field_ids: set[int], table_ids: set[int]) -> None:
        """Load the fields (and their FK targets) and tables a query names in a few queries, not one each."""
        field_ids = {i for i in field_ids if i not in self._fields}
        if field_ids:
            rows = self.session.scalars(sa_select(Field).where(Field.id.in_(field_ids))).all()
            targets = {f.fk_target_field_id for f in rows if f.fk_target_field_id} - field_ids
            if targets:
                rows += self.session.scalars(sa_select(Field).where(Field.id.in_(targets))).all()
            table_ids |= {f.table_id for f in rows}
        table_ids = {i for i in table_ids if i not in self._tables}
        tables = {t.id: t for t in self.session.scalars(sa_select(Table).where(Table.id.in_(table_ids)))} if table_ids else {}
        for table_id in table_ids:
            if table_id in tables:
                self.table(table_id, tables[table_id])
        for f in rows if field_ids else ():
            if f.table_id in self._tables:
                self._fields[f.id] = f

    def table(self, table_id: int, loaded: Table | None = None) -> Table:
        if table_id not in self._tables:
            table = loaded if loaded is not None else self.session.get(Table, table_id)
            if table is None or not table.active:
                raise Invalid(f"Invalid MBQL: table {table_id} does not exist.")
            if table.db_id != self.database_id:
                raise Invalid(f"Invalid MBQL: table {table_id} is not in database {self.database_id}.")
            self._tables[table_id] = table
        return self._tables[table_id]

    def field(self, field_id: int) -> Field:
        if field_id not in self._fields:
            f = self.session.get(Field, field_id)
            if f is None:
                raise Invalid(f"Invalid MBQL: field {field_id} does not exist.")
            self.table(f.table_id)
            self._fields[field_id] = f
        return self._fields[field_id]

    def field_types(self, field_id: int) -> tuple[str | None, str | None] | None:
        """A field's (base_type, effective_type), or None when it is not a field of this database."""
        try:
            f = self.field(field_id)
        except Invalid:
            return None
        return f.base_type, f.effective_type

    def field_named(self, table: Table, name: str) -> Field:
        f = self.session.scalars(sa_select(Field).where(Field.table_id == table.id, Field.name == name,
                                                        Field.parent_id.is_(None))).first()
        if f is None:
            raise Invalid(f"Invalid MBQL: table {table.name!r} has no column named {name!r}.")
        self._fields[f.id] = f
        return f

    def visible_fields(self, table: Table) -> list[Field]:
        rows = self.session.scalars(sa_select(Field).where(
            Field.table_id == table.id, Field.active.is_(True), Field.parent_id.is_(None),
            Field.visibility_type.not_in(HIDDEN_VISIBILITY))).all()
        for f in rows:
            self._fields[f.id] = f
        allowed = self.readable_columns(table)
        if allowed is not None:
            rows = [f for f in rows if f.name in allowed]
        return sorted(rows, key=lambda f: (f.position, f.name.lower(), f.id))

    # ---- row and column restrictions (core.query.restrictions) -------------------------------------

    def table_expression(self, table: Table, alias: str) -> exp.Expression:
        """The table as the query reads it: itself, or its restriction's SELECT under the same alias."""
        if not self.row_policy or self.row_policy.get(table.id) is None:
            return _table_ast(table, alias)
        from .restrictions import compile_restricted

        return _subquery(compile_restricted(self, table).tree.copy(), alias)

    def readable_columns(self, table: Table) -> frozenset[str] | None:
        """The names of the table's columns the viewer may read (None: all of them)."""
        if not self.row_policy or self.row_policy.get(table.id) is None:
            return None
        from .restrictions import compile_restricted

        return compile_restricted(self, table).columns

    def check_column(self, table: Table, f: Field) -> None:
        allowed = self.readable_columns(table)
        if allowed is not None and f.name not in allowed:
            raise Invalid(f"Invalid MBQL: column {f.name!r} of table {table.name!r} is not available to you.")

    def supports(self, feature: str) -> bool:
        return feature in self.driver.features

    def require(self, feature: str, what: str) -> None:
        if not self.supports(feature):
            raise Invalid(f"Invalid MBQL: {what} is not supported by the {self.driver.engine} driver.")


@dataclass
class Col:
    """A column a stage selects: its SQL, its alias, and what Metabase reports about it."""

    alias: str
    sql: exp.Expression
    meta: dict
    ref_key: tuple | None = None
    group_sql: exp.Expression | None = None
    aggregation_index: int | None = None
    field_id: int | None = None
    unit: str | None = None
    binning: dict | None = None
    join_alias: str | None = None
    # The type of `sql` when a coercion strategy converted the field (core.query.coercion), else None.
    value_type: str | None = None


@dataclass
class TableSource:
    table: Table
    alias: str


@dataclass
class QuerySource:
    alias: str
    tree: exp.Select
    cols: list[Col]

    def find(self, ident, opts: dict) -> Col | None:
        if isinstance(ident, str):
            for col in self.cols:
                if col.alias == ident:
                    return col
            return None
        candidates = [c for c in self.cols if c.field_id == ident]
        for preference in (lambda c: c.join_alias == opts.get("join-alias") and c.unit == opts.get("temporal-unit"),
                           lambda c: c.join_alias == opts.get("join-alias"),
                           lambda c: True):
            for col in candidates:
                if preference(col):
                    return col
        return None


@dataclass
class Info:
    """What a resolved field reference is: its field row, the upstream column, how it was reached."""

    name: str
    display_name: str
    base_type: str
    effective_type: str | None
    semantic_type: str | None
    field: Field | None = None
    upstream: Col | None = None
    join_alias: str | None = None
    fk_field: Field | None = None
    # What the column's SQL holds when a coercion strategy converted it (base_type stays the stored type).
    value_type: str | None = None

    @property
    def sql_type(self) -> str:
        """The type the SQL expression has: what bucketing, binning and filters work on."""
        return self.value_type or self.base_type


def _table_ast(table: Table, alias: str) -> exp.Table:
    return exp.Table(this=exp.to_identifier(table.name, quoted=True),
                     db=exp.to_identifier(table.schema, quoted=True) if table.schema else None,
                     alias=exp.TableAlias(this=exp.to_identifier(alias, quoted=True)))


def _subquery(tree: exp.Select, alias: str) -> exp.Subquery:
    return exp.Subquery(this=tree, alias=exp.TableAlias(this=exp.to_identifier(alias, quoted=True)))


class RefResolver:
    """Sources, joins and field references of one stage."""

    def __init__(self, context: Context, stage, source: QuerySource | None):
        self.context = context
        self.driver = context.driver
        self.stage = stage
        self.source = source
        self.main: TableSource | QuerySource | None = None
        self.joins: dict[str, TableSource | QuerySource] = {}
        self.join_specs: dict[str, Any] = {}
        self.join_clauses: list[exp.Join] = []
        self.implicit_joins: dict[str, TableSource] = {}
        self.expressions: dict[str, list] = {}
        self._expanding: set[str] = set()

    # ---- sources ----------------------------------------------------------------------------------

    def setup_source(self) -> None:
        stage = self.stage
        if stage.source_table is not None:
            table = self.context.table(stage.source_table)
            self.main = TableSource(table, table.name)
        elif self.source is not None:
            self.main = self.source
        else:
            raise Invalid("Invalid MBQL: the stage has no source.")

    def from_expression(self) -> exp.Expression:
        if isinstance(self.main, TableSource):
            return self.context.table_expression(self.main.table, self.main.alias)
        return _subquery(self.main.tree, self.main.alias)

    def add_join(self, join) -> None:
        alias = join.alias or f"join_{len(self.joins) + 1}"
        if alias in self.joins or (isinstance(self.main, TableSource) and alias == self.main.alias):
            raise Invalid(f"Invalid MBQL: join alias {alias!r} is used twice.")
        first = join.stages[0]
        simple = (len(join.stages) == 1 and first.source_table is not None and not first.joins
                  and not first.expressions and not first.filters and not first.aggregated
                  and first.fields is None and not first.order_by and first.limit is None and first.page is None)
        if simple:
            table = self.context.table(first.source_table)
            scope: TableSource | QuerySource = TableSource(table, alias)
            target = self.context.table_expression(table, alias)
        else:
            tree, cols = self.context.compile_stages(self.context, join.stages)
            scope = QuerySource(alias, tree, cols)
            target = _subquery(tree, alias)
        self.joins[alias] = scope
        self.join_specs[alias] = join
        condition = self.filter(join.condition)
        side, kind = {"left-join": ("LEFT", None), "right-join": ("RIGHT", None),
                      "inner-join": (None, "INNER"), "full-join": ("FULL", None)}[join.strategy]
        if join.strategy == "right-join":
            self.context.require("right-join", "a right join")
        if join.strategy == "full-join":
            self.context.require("full-join", "a full join")
        self.join_clauses.append(exp.Join(this=target, on=condition, side=side, kind=kind))

    def scope_fields(self, scope, join_alias: str | None) -> list[list]:
        """Refs to every column a scope offers, as `fields: all` or a stage without fields lists them."""
        base = {"join-alias": join_alias} if join_alias else {}
        if isinstance(scope, TableSource):
            return [["field", f.id, dict(base)] for f in self.context.visible_fields(scope.table)]
        refs = []
        for col in scope.cols:
            if col.field_id is not None and col.aggregation_index is None and col.binning is None:
                opts = dict(base)
                if col.unit and col.unit != "default":
                    opts["temporal-unit"] = col.unit
                refs.append(["field", col.field_id, opts])
            else:
                refs.append(["field", col.alias, {**base, "base-type": col.meta["base_type"]}])
        return refs

    def source_columns(self) -> list[Col]:
        return [self.column_for(ref, "fields") for ref in self.scope_fields(self.main, None)]

    def join_columns(self, alias: str) -> list[Col]:
        spec = self.join_specs[alias]
        if spec.fields == "none":
            return []
        refs = self.scope_fields(self.joins[alias], alias) if spec.fields == "all" else spec.fields
        return [self.column_for(ref, "fields") for ref in refs]

    # ---- field references -------------------------------------------------------------------------

    def field_expr(self, ref: list) -> tuple[exp.Expression, Info]:
        """A field reference as a column expression, before temporal bucketing or binning."""
        _, ident, opts = ref
        alias = opts.get("join-alias")
        if alias is not None:
            if alias in self.joins:
                return self.in_scope(self.joins[alias], ident, opts, alias)
            if isinstance(self.main, QuerySource):
                return self.in_scope(self.main, ident, opts, None)
            raise Invalid(f"Invalid MBQL: no join with alias {alias!r} for field {ident!r}.")
        if opts.get("source-field") is not None:
            return self.implicit(ident, opts)
        return self.in_scope(self.main, ident, opts, None)

    def in_scope(self, scope, ident, opts: dict, join_alias: str | None) -> tuple[exp.Expression, Info]:
        if isinstance(scope, TableSource):
            if isinstance(ident, int):
                f = self.context.field(ident)
                if f.table_id != scope.table.id:
                    raise Invalid(f"Invalid MBQL: field {ident} is not a column of table {scope.table.name!r}; "
                                  "reference it through a join alias or a source-field.")
            else:
                f = self.context.field_named(scope.table, ident)
            self.context.check_column(scope.table, f)
            info = Info(name=f.name, display_name=field_display_name(f), base_type=f.base_type,
                        effective_type=f.effective_type or f.base_type, semantic_type=f.semantic_type,
                        field=f, join_alias=join_alias)
            if join_alias:
                info.display_name = f"{join_alias} → {info.display_name}"
            return self.coerced(exp.column(f.name, table=scope.alias, quoted=True), info)
        col = scope.find(ident, opts)
        if col is None:
            if isinstance(ident, int):
                # A field id that the previous stage did not select by id: find it by its name.
                f = self.context.field(ident)
                col = scope.find(f.name, opts)
            if col is None:
                raise Invalid(f"Invalid MBQL: column {ident!r} is not returned by the source query.")
        meta = col.meta
        info = Info(name=col.alias, display_name=meta["display_name"], base_type=meta["base_type"],
                    effective_type=meta.get("effective_type"), semantic_type=meta.get("semantic_type"),
                    field=self.context.field(col.field_id) if col.field_id else None, upstream=col,
                    join_alias=join_alias, value_type=col.value_type)
        if join_alias:
            info.display_name = f"{join_alias} → {info.display_name}"
        return exp.column(col.alias, table=scope.alias, quoted=True), info

    def implicit(self, ident, opts: dict) -> tuple[exp.Expression, Info]:
        if not isinstance(ident, int):
            raise Invalid(f"Invalid MBQL: a source-field reference needs a field id, got {ident!r}.")
        # The FK may itself come through an explicit join (MBQL's source-field-join-alias).
        via_join = opts.get("source-field-join-alias")
        fk_ref = ["field", opts["source-field"], {"join-alias": via_join} if via_join else {}]
        fk_expr, fk_info = self.field_expr(fk_ref)
        fk_field = self.context.field(opts["source-field"])
        if fk_field.fk_target_field_id is None:
            raise Invalid(f"Invalid MBQL: field {fk_field.id} ({fk_field.name!r}) is not a foreign key.")
        pk = self.context.field(fk_field.fk_target_field_id)
        target = self.context.field(ident)
        if pk.table_id != target.table_id:
            raise Invalid(f"Invalid MBQL: field {ident} is not in the table that field {fk_field.id} points to.")
        table = self.context.table(target.table_id)
        self.context.check_column(table, target)
        alias = f"{table.name}__via__{fk_field.name}" + (f"__via__{via_join}" if via_join else "")
        if alias not in self.implicit_joins:
            self.implicit_joins[alias] = TableSource(table, alias)
            on = exp.EQ(this=fk_expr, expression=exp.column(pk.name, table=alias, quoted=True))
            self.join_clauses.append(exp.Join(this=self.context.table_expression(table, alias), on=on, side="LEFT"))
        fk_name = fk_info.display_name
        if fk_name.lower().endswith(" id"):
            fk_name = fk_name[:-3]
        info = Info(name=target.name, display_name=f"{fk_name} → {field_display_name(target)}",
                    base_type=target.base_type, effective_type=target.effective_type or target.base_type,
                    semantic_type=target.semantic_type, field=target, fk_field=fk_field)
        return self.coerced(exp.column(target.name, table=alias, quoted=True), info)

    def coerced(self, column: exp.Column, info: Info) -> tuple[exp.Expression, Info]:
        """A table column converted by its field's coercion strategy, as every use of the field sees it."""
        f = info.field
        sql, info.value_type = coerce(self.driver, column, f.coercion_strategy, f.base_type,
                                      f"field {f.id} ({f.name!r})")
        return sql, info

    # ---- bucketing and binning --------------------------------------------------------------------

    def bucket(self, expr: exp.Expression, info: Info, opts: dict) -> tuple[exp.Expression, dict]:
        """Apply temporal-unit and binning options; returns the expression and metadata changes."""
        changes: dict = {}
        unit = opts.get("temporal-unit")
        upstream_unit = info.upstream.unit if info.upstream is not None else None
        if unit and unit != "default" and unit != upstream_unit and is_temporal(info.sql_type):
            expr = self.temporal_bucket(expr, unit, info.sql_type)
            changes["unit"] = changes["applied_unit"] = unit
            changes["display_name"] = f"{info.display_name}: {temporal.humanize(unit)}"
            if unit in temporal.EXTRACTION_UNITS:
                changes["effective_type"] = "type/Integer"
        elif is_temporal(info.sql_type):
            changes["unit"] = upstream_unit or "default"
        binning = opts.get("binning")
        if binning is not None:
            expr, binning_info = self.binned(expr, info, binning)
            changes["binning_info"] = binning_info
            strategy = binning_info["binning_strategy"]
            label = {"num-bins": f"{binning_info['num_bins']} bins", "bin-width": f"{binning_info['bin_width']}",
                     "default": "Auto binned"}[binning["strategy"] if binning["strategy"] == "default" else strategy]
            changes["display_name"] = f"{info.display_name}: {label}"
        return expr, changes

    def temporal_bucket(self, expr: exp.Expression, unit: str, base_type: str) -> exp.Expression:
        driver, week_start = self.driver, self.context.week_start
        if unit == "week-of-year":
            return week_of_year(driver, expr, week_start)
        if unit in temporal.EXTRACTION_UNITS:
            return driver.extract_temporal(expr, unit, week_start)
        if unit in temporal.TRUNCATION_UNITS:
            truncated = driver.truncate_temporal(expr, unit, week_start)
            if is_date(base_type) and unit not in ("millisecond", "second", "minute", "hour"):
                truncated = driver.cast_date(truncated)
            return truncated
        if unit == "year-of-era":
            return driver.extract_temporal(expr, "year")
        raise Invalid(f"Invalid MBQL: temporal unit {unit!r} is not supported.")

    def binned(self, expr: exp.Expression, info: Info, binning: dict) -> tuple[exp.Expression, dict]:
        if info.sql_type not in NUMERIC_TYPES:
            raise Invalid(f"Invalid MBQL: cannot bin {info.name!r}, which is not a number.")
        fingerprint = (info.field.fingerprint if info.field is not None else None) or {}
        number = (fingerprint.get("type") or {}).get("type/Number") or {}
        low, high = number.get("min"), number.get("max")
        if not isinstance(low, (int, float)) or not isinstance(high, (int, float)):
            raise Invalid(f"Invalid MBQL: cannot bin {info.name!r}: its fingerprint has no min and max values.")
        strategy = binning["strategy"]
        if strategy == "default":
            semantic = info.semantic_type or ""
            if semantic in ("type/Latitude", "type/Longitude", "type/Coordinate"):
                strategy, width = "bin-width", COORDINATE_BIN_WIDTH
                bins = max(math.ceil((high - low) / width), 1)
            else:
                strategy, bins = "num-bins", BREAKOUT_BINS
                width = _bin_width(low, high, bins)
        elif strategy == "num-bins":
            bins = binning["num-bins"]
            width = _bin_width(low, high, bins)
        else:
            width = binning["bin-width"]
            implied = (high - low) / width
            if not implied <= MAX_BINS:  # also catches inf and nan from a vanishing width
                raise Invalid(f"Invalid MBQL: bin-width {width} would split {info.name!r} into more than "
                              f"{MAX_BINS} bins.")
            bins = max(math.ceil(implied), 1)
        low, high, bins, width = _nicer(strategy, low, high, bins, width)
        shifted = exp.Sub(this=expr, expression=lit(low))
        floored = exp.Floor(this=exp.Div(this=self.driver.to_float(shifted), expression=lit(width)))
        sql = exp.Add(this=exp.Mul(this=floored, expression=lit(width)), expression=lit(low))
        return sql, {"binning_strategy": strategy, "bin_width": width, "num_bins": bins,
                     "min_value": low, "max_value": high}


def week_of_year(driver, expr: exp.Expression, week_start: int) -> exp.Expression:
    """Metabase's week-of-year bucket: CEIL(day-of-year of the week's first day / 7), weeks starting on
    `week_start`; early January days whose week began in December count as that year's last week."""
    day = driver.extract_temporal(driver.truncate_temporal(expr, "week", week_start), "day-of-year")
    weeks = exp.Ceil(this=exp.Div(this=driver.to_float(day), expression=lit(7.0)))
    return exp.Cast(this=weeks, to=exp.DataType.build("int"))


def week_of_year_from_january(driver, expr: exp.Expression, week_start: int) -> exp.Expression:
    """Metabase's US and instance week numbers: January 1st is in week 1, and each `week_start` day
    after it begins the next week (US weeks start on Sunday, instance weeks on the setting's day).
    1 + CEIL((day-of-year - days from January 1st to the first week start after it) / 7)."""
    january_first = driver.truncate_temporal(expr.copy(), "year", week_start)
    weekday = exp.Paren(this=driver.extract_temporal(january_first, "day-of-week", week_start))
    until_first_start = exp.Sub(this=lit(8), expression=weekday)
    days = exp.Sub(this=driver.extract_temporal(expr, "day-of-year"), expression=exp.Paren(this=until_first_start))
    full_weeks = exp.Ceil(this=exp.Div(this=driver.to_float(days), expression=lit(7.0)))
    return exp.Cast(this=exp.Add(this=full_weeks, expression=lit(1)), to=exp.DataType.build("int"))


def _bin_width(low: float, high: float, bins: int) -> float:
    width = round((high - low) / bins, 5)
    return width or 1


def _nicer(strategy: str, low: float, high: float, bins: int, width: float) -> tuple:
    """Metabase's nicer-breakout: a pleasing width for num-bins, bounds on multiples of the width,
    iterated to a fixed point (at most ten steps)."""
    state = (low, high, bins, width)
    for _ in range(10):
        low, high, bins, width = state
        if strategy == "num-bins":
            raw = _bin_width(low, high, bins)
            scale = 10 ** math.floor(math.log10(raw))
            width = next(p * scale for p in (1, 1.25, 2, 2.5, 3, 5, 7.5, 10) if p * scale >= raw)
        new_low = math.floor(low / width) * width
        new_high = math.ceil(high / width) * width
        new_bins = bins if strategy == "num-bins" else max(math.ceil((new_high - new_low) / width), 1)
        new_state = (_tidy(new_low), _tidy(new_high), new_bins, _tidy(width))
        if new_state == state:
            break
        state = new_state
    return state


def _tidy(x: float):
    """Floating-point noise off a computed bound (1.2000000000000002 -> 1.2); integers stay integers."""
    rounded = round(x, 10)
    return int(rounded) if float(rounded).is_integer() and isinstance(x, int) else rounded
