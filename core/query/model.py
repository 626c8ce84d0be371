"""The one internal model of a query that core.query.mbql reads every MBQL dialect into: a Query of
Stages (innermost first) with their Joins, clauses in the canonical legacy list shape, the vocabulary
(temporal units, join strategies, binning) and a walk over the ids a query names.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

Clause = list

TEMPORAL_UNITS = frozenset({
    "default", "millisecond", "second", "minute", "minute-of-hour", "hour", "hour-of-day", "day",
    "day-of-week", "day-of-month", "day-of-year", "week", "week-of-year", "month", "month-of-year",
    "quarter", "quarter-of-year", "year", "year-of-era",
})
JOIN_STRATEGIES = frozenset({"left-join", "right-join", "inner-join", "full-join"})
BINNING_STRATEGIES = frozenset({"default", "num-bins", "bin-width"})
MAX_BINS = 10_000
"""The most bins a binned breakout may ask for (num-bins) or imply (range / bin-width): beyond it the
bin arithmetic loses meaning (a width of 1e-300 underflows) and the result is one row per value anyway."""
CARD_TABLE = re.compile(r"^card__([1-9]\d*)$")



@dataclass
class Join:
    alias: str
    stages: list["Stage"]
    condition: Clause | None
    strategy: str = "left-join"
    fields: str | list = "none"


@dataclass
class Stage:
    source_table: int | None = None
    source_card: int | None = None
    # A native first stage: {"query": sql, "template-tags": {...}}.
    native: dict | None = None
    joins: list[Join] = field(default_factory=list)
    expressions: dict[str, Clause] = field(default_factory=dict)
    filters: list[Clause] = field(default_factory=list)
    aggregations: list[Clause] = field(default_factory=list)
    breakouts: list[Clause] = field(default_factory=list)
    fields: list[Clause] | None = None
    order_by: list[Clause] = field(default_factory=list)
    limit: int | None = None
    page: dict | None = None
    source_metadata: list | None = None
    # Set on the last stage of a model's own query (core.query.cards): the model's result_metadata, whose
    # user-editable keys the columns leaving this stage take (core.query.cards.apply_model_metadata).
    model_metadata: list | None = None

    @property
    def aggregated(self) -> bool:
        return bool(self.aggregations or self.breakouts)


@dataclass
class Query:
    database: int
    stages: list[Stage]
    parameters: list = field(default_factory=list)
    constraints: dict | None = None
    middleware: dict | None = None
    settings: dict | None = None
    info: dict | None = None

    @property
    def last(self) -> Stage:
        return self.stages[-1]

    @property
    def aggregated(self) -> bool:
        return self.last.aggregated


def referenced_ids(stages: list[Stage]) -> tuple[set[int], set[int]]:
    """The field ids and table ids a query names anywhere (joins and nested stages included)."""
    fields: set[int] = set()
    tables: set[int] = set()

    def walk(x) -> None:
        if isinstance(x, list):
            if len(x) == 3 and x[0] == "field" and isinstance(x[2], dict):
                if isinstance(x[1], int):
                    fields.add(x[1])
                if isinstance(x[2].get("source-field"), int):
                    fields.add(x[2]["source-field"])
            for item in x:
                walk(item)
        elif isinstance(x, dict):
            for item in x.values():
                walk(item)

    def stage_ids(stage: Stage) -> None:
        if stage.source_table is not None:
            tables.add(stage.source_table)
        for join in stage.joins:
            for inner in join.stages:
                stage_ids(inner)
            walk(join.condition)
            walk(join.fields)
        for part in (stage.expressions, stage.filters, stage.aggregations, stage.breakouts, stage.fields,
                     stage.order_by):
            walk(part)

    for stage in stages:
        stage_ids(stage)
    return fields, tables
