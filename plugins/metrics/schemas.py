"""Request bodies and parameters of /api/metric."""
from __future__ import annotations

from core.api import Params
from core.types import Bool, Map, NonBlankStr, PositiveInt, Str


class MetricId(Params):
    id: PositiveInt


class NewMetric(Params):
    name: NonBlankStr
    description: Str | None = None
    table_id: PositiveInt
    definition: Map


class MetricChanges(Params):
    name: NonBlankStr | None = None
    description: Str | None = None
    definition: Map | None = None
    revision_message: NonBlankStr
    archived: Bool | None = None
    caveats: Str | None = None
    how_is_this_calculated: Str | None = None
    points_of_interest: Str | None = None
    show_in_getting_started: Bool | None = None


class ImportantFields(Params):
    important_field_ids: list[PositiveInt]


class RevisionMessage(Params):
    revision_message: NonBlankStr


class Revert(Params):
    revision_id: PositiveInt
