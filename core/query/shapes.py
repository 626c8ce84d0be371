"""The declared shape of a dataset_query (and of an MBQL inner query) in request bodies.

Every body that carries a query (cards, dashcards, actions, POST /api/dataset, segment and metric
definitions) declares it with these shapes, so that an id beyond BIGINT or a known key of the wrong
type is a 400 in Metabase's error shape before a service sees it, and so that the OpenAPI document
describes what the fuzzer should send inside. They name the keys of every dialect core.query.mbql
reads (legacy MBQL with `type` query or native, and MBQL 5 with `stages`) and allow any other key:
a shape declares what it checks, core.query.mbql still reads the query and says what is wrong with it.
Clauses stay lists of anything here; the ids inside them are bounded where the reader takes them.
"""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from core.http import types as t
from core.http.api import Shape

CardTable = Annotated[str, Field(strict=True, pattern=r"^card__[1-9][0-9]{0,18}$")]
SourceTable = Annotated[
    t.PositiveInt | CardTable,
    t.MbType('value must be a table id or "card__<id>".', ('should be a positive int or "card__<id>"',)),
]
Clause = Annotated[list[Any], t.MbType("value must be an MBQL clause (a sequence).", ("should be a sequence",))]
"""A filter, a list of aggregations, breakouts, fields or orderings: a sequence whose items the reader checks."""
Clauses = Annotated[list[Any], t.MbType("value must be a sequence.", ("should be a sequence",))]
JoinFields = Annotated[
    t.Str | list[Any],
    t.MbType('value must be "all", "none" or a sequence of fields.', ('should be "all", "none" or a sequence',)),
]
Limit = t.IntGreaterThanOrEqualToZero


class MbqlPage(Shape):
    page: t.PositiveInt | None = None
    items: t.PositiveInt | None = None


class MbqlJoin(Shape):
    """A join of either dialect: a legacy source, or MBQL 5 stages."""

    source_table: SourceTable | None = Field(None, alias="source-table")
    source_query: MbqlQuery | None = Field(None, alias="source-query")
    stages: list[MbqlStage] | None = None
    alias: t.Str | None = None
    condition: Clause | None = None
    conditions: Clauses | None = None
    fields: JoinFields | None = None
    strategy: t.Str | None = None


class MbqlQuery(Shape):
    """A legacy MBQL inner query (dataset_query.query, a segment's or a metric's definition)."""

    source_table: SourceTable | None = Field(None, alias="source-table")
    source_query: MbqlQuery | None = Field(None, alias="source-query")
    joins: list[MbqlJoin] | None = None
    filter: Clause | None = None
    aggregation: Clause | None = None
    breakout: Clause | None = None
    fields: Clause | None = None
    order_by: Clause | None = Field(None, alias="order-by")
    expressions: t.Map | None = None
    limit: Limit | None = None
    page: MbqlPage | None = None


class TemplateTag(Shape):
    """A native query's template tag: the ids it names are bounded, the rest is checked when it runs."""

    type: t.Str | None = None
    name: t.Str | None = None
    card_id: t.PositiveInt | None = Field(None, alias="card-id")
    snippet_id: t.PositiveInt | None = Field(None, alias="snippet-id")
    dimension: Clause | None = None


class NativeQuery(Shape):
    query: t.Str | None = None
    template_tags: dict[str, TemplateTag] | None = Field(None, alias="template-tags")
    collection: t.Str | None = None


class MbqlStage(Shape):
    """An MBQL 5 stage: an MBQL one (a source and clauses) or a native one (the SQL and its tags)."""

    lib_type: t.Str | None = Field(None, alias="lib/type")
    source_table: SourceTable | None = Field(None, alias="source-table")
    source_card: t.PositiveInt | None = Field(None, alias="source-card")
    native: t.Str | None = None
    template_tags: dict[str, TemplateTag] | None = Field(None, alias="template-tags")
    joins: list[MbqlJoin] | None = None
    filters: Clauses | None = None
    aggregation: Clauses | None = None
    breakout: Clauses | None = None
    fields: Clauses | None = None
    order_by: Clauses | None = Field(None, alias="order-by")
    expressions: Clauses | None = None
    limit: Limit | None = None
    page: MbqlPage | None = None


class DatasetQuery(Shape):
    """A whole dataset_query: legacy (`type` query with `query`, or native with `native`) or MBQL 5
    (`lib/type` mbql/query with `stages`). The database may be negative (the saved-questions virtual
    database, -1337) but no larger than BIGINT."""

    database: t.Int | None = None
    type: t.Str | None = None
    query: MbqlQuery | None = None
    native: NativeQuery | None = None
    lib_type: t.Str | None = Field(None, alias="lib/type")
    stages: list[MbqlStage] | None = None
    parameters: list[t.Map] | None = None
    constraints: t.Map | None = None
    middleware: t.Map | None = None


MbqlJoin.model_rebuild()
MbqlQuery.model_rebuild()
