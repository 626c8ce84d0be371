"""Request bodies of /api/segment and /api/metric: both are named MBQL definitions on one table with
the same create, change, archive and revert calls; a metric adds how_is_this_calculated and its
important fields."""
from __future__ import annotations

from core.http.api import Params, as_sent
from core.http.types import (
    Bool,
    DescriptionStr,
    NameStr,
    NonBlankStr,
    PositiveInt,
    Str,
)
from core.query.shapes import MbqlQuery


class DefinitionId(Params):
    id: PositiveInt


class NewDefinition(Params):
    name: NameStr
    description: DescriptionStr | None = None
    table_id: PositiveInt
    definition: as_sent(MbqlQuery)


class DefinitionChanges(Params):
    name: NameStr | None = None
    description: DescriptionStr | None = None
    definition: as_sent(MbqlQuery) | None = None
    revision_message: NonBlankStr
    archived: Bool | None = None
    caveats: Str | None = None
    points_of_interest: Str | None = None
    show_in_getting_started: Bool | None = None


class RevisionMessage(Params):
    revision_message: NonBlankStr


class Revert(Params):
    revision_id: PositiveInt


class MetricChanges(DefinitionChanges):
    how_is_this_calculated: Str | None = None


class ImportantFields(Params):
    important_field_ids: list[PositiveInt]
