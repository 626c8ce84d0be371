"""Request bodies and parameters of /api/metric: the shapes every named definition shares, plus a
metric's how_is_this_calculated and its important fields."""
from __future__ import annotations

from core.api import Params
from core.definition_params import DefinitionChanges
from core.definition_params import DefinitionId as MetricId  # noqa: F401
from core.definition_params import NewDefinition as NewMetric  # noqa: F401
from core.definition_params import Revert, RevisionMessage  # noqa: F401
from core.types import PositiveInt, Str


class MetricChanges(DefinitionChanges):
    how_is_this_calculated: Str | None = None


class ImportantFields(Params):
    important_field_ids: list[PositiveInt]
