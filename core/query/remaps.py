"""Remapped columns: a field's Dimension shows its values another way in MBQL results, as Metabase's
add-remaps middleware does (formerly add-dimension-projections).

- External dimension (`human_readable_field_id`, an FK shown as a field of the table it points to):
  while a stage of the query compiles, every returned column of a remapped field gets the target field
  through an implicit join (`["field", target, {"source-field": fk}]`, so the compiler builds the
  join). Plain stages append it after all their columns; aggregated stages put it in the breakout
  just before the original, so it is grouped and sorted on first; an order-by on the original sorts
  by the remapped column instead. Columns of implicit joins are not remapped, columns of explicit
  joins are (through the join's FK). A stage whose source is an earlier stage and that lists no
  fields passes the earlier stage's remaps on instead of adding its own.
- Internal dimension (FieldValues.human_readable_values): after the query, each column of such a
  field gets a new last column holding its values' names (unnamed values: null), row by row as the
  rows stream.
- Both mark the pair of columns: the original gets `remapped_to` (the new column's name), the new one
  `remapped_from` (the original's name) and the dimension's name as display name.
- Downloads (not the `api` format) show the remapped value in the original column's place, titled as
  the remapped column, and drop the remapped column (Metabase's export-column-order):
  `export_order`.

Only MBQL is remapped; native queries, and runs that ask `disable-remaps?` (parameter values, value
lists, pivots), are not.
"""
from __future__ import annotations

import decimal
import operator
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from sqlalchemy import select

from core.appdb.models import Dimension, FieldValues
from core.http.errors import Invalid

from .refs import HIDDEN_VISIBILITY, Col, QuerySource

NUMERIC_TYPES = ("type/Integer", "type/BigInteger", "type/Float", "type/Decimal", "type/Number")


class Dimensions:
    """Dimension rows by field id, read once per run in as few queries as there are new ids."""

    def __init__(self, session, readable_fields=None):
        self.session = session
        # field ids -> the ids among them the user may read (core.query.access.readable_field_ids): an
        # external remap whose target lives in a table the user may not see is left out.
        self.readable_fields = readable_fields
        self._rows: dict[int, Dimension | None] = {}

    def load(self, field_ids: Iterable[int]) -> None:
        missing = {i for i in field_ids if isinstance(i, int) and i not in self._rows}
        if not missing:
            return
        self._rows.update(dict.fromkeys(missing))
        rows = list(self.session.scalars(select(Dimension).where(Dimension.field_id.in_(missing))))
        targets = {r.human_readable_field_id for r in rows if r.type == "external"}
        readable = self.readable_fields(targets) if self.readable_fields is not None and targets else targets
        for row in rows:
            if row.type != "external" or row.human_readable_field_id in readable:
                self._rows[row.field_id] = row

    def get(self, field_id: int | None, kind: str) -> Dimension | None:
        row = self._rows.get(field_id) if field_id is not None else None
        return row if row is not None and row.type == kind else None


# --------------------------------------------------------------------------------------------------
# External remaps: columns added while the stages compile
# --------------------------------------------------------------------------------------------------


class ExternalRemaps:
    """The compiler's `remapper` (core.query.refs.Context): extends the columns of the query's own
    stages (not those of joins compiled as subqueries) and marks the pairs once compiling is done."""

    def __init__(self, dimensions: Dimensions, stages: list):
        self.dimensions = dimensions
        self.stages = {id(stage) for stage in stages}
        # (original column, remapped column, dimension name) of the last stage compiled.
        self.pairs: list[tuple[Col, Col, str]] = []

    def extend(self, compiler, cols: list[Col]) -> list[Col]:
        stage = compiler.stage
        if id(stage) not in self.stages:
            return cols
        pairs = self._carried(cols)
        # A stage with window aggregations has compiled its windows over the breakouts already, and
        # a new leading breakout would reorder its rows against them: its breakouts stay as they are.
        if stage.aggregated and compiler.windowed_stage():
            self.pairs = pairs
            return cols
        done = {id(original) for original, _, _ in pairs}
        pool = list(compiler.breakout_cols) if stage.aggregated else list(cols)
        candidates = [c for c in pool if id(c) not in done and self._eligible(compiler, c)]
        self.dimensions.load(c.field_id for c in candidates)
        for col in candidates:
            ref = self._target_ref(compiler, col)
            if ref is None:
                continue
            key = compiler.ref_key(ref)
            existing = next((c for c in cols if c.ref_key == key), None)
            if existing is not None:  # already selected: it is the remapped column, nothing added
                new = existing
            elif stage.aggregated:
                new = compiler.column_for(ref, "breakout", breakout=True)
                cols.insert(cols.index(col), new)
                compiler.breakout_cols.insert(compiler.breakout_cols.index(col), new)
            else:
                new = compiler.column_for(ref, "fields")
                cols.append(new)
            compiler.remapped[id(col)] = new
            pairs.append((col, new, self.dimensions.get(col.field_id, "external").name))
        self.pairs = pairs
        return cols

    def _carried(self, cols: list[Col]) -> list[tuple[Col, Col, str]]:
        """The previous stage's pairs, where this stage still returns both columns under their names."""
        by_name = {c.meta["name"]: c for c in cols}
        out = []
        for original, new, name in self.pairs:
            a, b = by_name.get(original.meta["name"]), by_name.get(new.meta["name"])
            if a is not None and b is not None and a is not b:
                out.append((a, b, name))
        return out

    @staticmethod
    def _eligible(compiler, col: Col) -> bool:
        if (col.field_id is None or col.aggregation_index is not None or col.binning is not None
                or col.unit not in (None, "default") or col.meta.get("fk_field_id") is not None):
            return False
        # A stage without fields over an earlier stage returns that stage's columns, remaps included.
        return not (compiler.stage.fields is None and not compiler.stage.aggregated and col.join_alias is None
                    and isinstance(compiler.main, QuerySource))

    def _target_ref(self, compiler, col: Col) -> list | None:
        """The implicit-join reference to the column's remapped field, or None when the dimension
        cannot be followed (no FK to the target's table, the target hidden or gone)."""
        dimension = self.dimensions.get(col.field_id, "external")
        if dimension is None or dimension.human_readable_field_id is None:
            return None
        context = compiler.context
        try:
            fk = context.field(col.field_id)
            target = context.field(dimension.human_readable_field_id)
            if fk.fk_target_field_id is None or context.field(fk.fk_target_field_id).table_id != target.table_id:
                return None
        except Invalid:
            return None
        if not target.active or target.visibility_type in HIDDEN_VISIBILITY:
            return None
        opts: dict[str, Any] = {"source-field": fk.id}
        if col.join_alias is not None:
            opts["source-field-join-alias"] = col.join_alias
        return ["field", target.id, opts]

    def annotate(self) -> None:
        """Mark the final stage's pairs (names are final once the stage has made them unique)."""
        for original, new, name in self.pairs:
            original.meta["remapped_to"] = new.meta["name"]
            new.meta["remapped_from"] = original.meta["name"]
            new.meta["display_name"] = name


# --------------------------------------------------------------------------------------------------
# Internal remaps: columns added to the results
# --------------------------------------------------------------------------------------------------


@dataclass
class Internal:
    index: int              # the original column
    names: dict             # canonical value -> human-readable value
    numeric: bool           # the column's values compare as numbers
    column: dict            # the new column


def _canonical(value: Any, numeric: bool) -> Any:
    """A value as a key: numbers of any Python type compare by value (4, 4.0, Decimal("4")), booleans
    stay booleans, and a text column's values compare as text."""
    if value is None or type(value) is bool:
        return value
    if numeric:
        try:
            number = value if isinstance(value, (int, float, decimal.Decimal)) else decimal.Decimal(str(value))
            return int(number) if number == int(number) else float(number)
        except (ArithmeticError, ValueError):  # not a number, NaN, infinities
            return value
    return str(value)


def _names_type(names: list) -> str:
    """The new column's type, from the human-readable values as Metabase infers it."""
    kinds = {"type/Text" if isinstance(v, str) else "type/Number" if isinstance(v, (int, float)) and
             not isinstance(v, bool) else "type/*" for v in names}
    return kinds.pop() if len(kinds) == 1 else "type/*"


def internal_remaps(session, dimensions: Dimensions, cols: list[dict]) -> list[Internal]:
    """The internal dimensions of the result's columns, in column order."""
    ids = {c.get("id") for c in cols if isinstance(c.get("id"), int)}
    if not ids:
        return []
    dimensions.load(ids)
    wanted = {i: dimensions.get(i, "internal") for i in ids}
    wanted = {i: d for i, d in wanted.items() if d is not None}
    if not wanted:
        return []
    values = {row.field_id: row for row in session.scalars(
        select(FieldValues).where(FieldValues.field_id.in_(wanted), FieldValues.type == "full"))}
    out = []
    for index, col in enumerate(cols):
        field_id = col.get("id")
        row = values.get(field_id)
        if field_id not in wanted or row is None or not row.values or not row.human_readable_values:
            continue
        numeric = (col.get("effective_type") or col.get("base_type")) in NUMERIC_TYPES
        names = {}
        for value, name in zip(row.values, row.human_readable_values):
            names.setdefault(_canonical(value, numeric), name)
        name = wanted[field_id].name
        base = _names_type(row.human_readable_values[:len(row.values)])
        out.append(Internal(index, names, numeric, {
            "description": None, "id": None, "table_id": None, "name": name, "display_name": name,
            "target": None, "remapped_from": col["name"], "remapped_to": None, "base_type": base,
            "effective_type": base, "semantic_type": None, "source": "fields",
            "field_ref": ["field", name, {"base-type": base}]}))
    return out


def with_internal_columns(cols: list[dict], internals: list[Internal]) -> list[dict]:
    out = [dict(c) for c in cols]
    for item in internals:
        out[item.index]["remapped_to"] = item.column["name"]
    return out + [item.column for item in internals]


def with_internal_values(rows: Iterable[tuple], internals: list[Internal]) -> Iterator[tuple]:
    """Each row with its remapped values appended; streamed, never a list of rows."""
    lookups = [(item.index, item.names.get, item.numeric) for item in internals]
    for row in rows:
        yield tuple(row) + tuple(get(_canonical(row[i], numeric)) for i, get, numeric in lookups)


# --------------------------------------------------------------------------------------------------
# Downloads
# --------------------------------------------------------------------------------------------------


def export_order(cols: list[dict]) -> list[int] | None:
    """Which result columns a download writes, in order: a remapped column's values take the place of
    the column they remap (the original is not written, its remapped column is not written twice).
    None when that is every column as it is."""
    index = {c.get("name"): i for i, c in enumerate(cols)}
    order = []
    for i, col in enumerate(cols):
        to = col.get("remapped_to")
        if to is not None and to in index:
            order.append(index[to])
        elif col.get("remapped_from") is None:
            order.append(i)
    return None if order == list(range(len(cols))) else order


class Projected:
    """A query Result's rows with only the columns of `order`, in that order (downloads)."""

    def __init__(self, result, order: list[int]):
        self.result = result
        self.order = order

    def batches(self) -> Iterator[list]:
        order = self.order
        if len(order) == 1:
            i = order[0]
            pick = lambda row: (row[i],)  # noqa: E731 - itemgetter of one index gives a bare value
        else:
            pick = operator.itemgetter(*order)
        for batch in self.result.batches():
            yield list(map(pick, batch))

    def __iter__(self) -> Iterator[tuple]:
        for batch in self.batches():
            yield from batch

    # CSV text written by the driver (core.export.csv), when it can pick the columns itself.
    @property
    def writes_csv(self) -> bool:
        return self.result.writes_csv

    def _picked(self, layout):
        import dataclasses

        return dataclasses.replace(layout, columns=tuple(self.order))

    def csv_accepts(self, layout) -> bool:
        return self.result.csv_accepts(self._picked(layout))

    def csv_chunks(self, layout, size: int) -> Iterator[bytes]:
        return self.result.csv_chunks(self._picked(layout), size)
