"""Request models of the public-link routes (/api/public)."""
from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

from core.export.response import ChartQuery, ExportFormat
from core.http import types as t
from core.http.api import Params

UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def _uuid(value: str) -> str:
    if not UUID_RE.match(value):
        raise ValueError("not a UUID")
    return value.lower()


Uuid = Annotated[str, Field(strict=True), AfterValidator(_uuid),
                 t.MbType("value must be a valid UUID.", ("should be a valid UUID",))]
"""A public link's UUID (Metabase's ms/UUIDString)."""


class UuidPath(Params):
    uuid: Uuid


class ExportPath(UuidPath):
    export_format: ExportFormat


class DashcardPath(UuidPath):
    dashcard_id: t.PositiveInt
    card_id: t.PositiveInt


class DashcardExportPath(DashcardPath):
    export_format: ExportFormat


class FieldPath(UuidPath):
    field_id: t.PositiveInt


class SearchPath(FieldPath):
    search_field_id: t.PositiveInt


class RemappingPath(FieldPath):
    remapped_id: t.PositiveInt


class ParamPath(UuidPath):
    param_key: t.NonBlankStr


class ParamSearchPath(ParamPath):
    query: t.NonBlankStr


class ParametersQuery(Params):
    """`parameters`: a JSON list of {id | slug, value} objects."""

    parameters: t.JsonStr | None = None


class ExportQuery(ChartQuery):
    parameters: t.JsonStr | None = None
    format_rows: t.BoolStr | None = None
    pivot_results: t.BoolStr | None = None


class ValueQuery(Params):
    value: t.NonBlankStr


class SearchQuery(ValueQuery):
    limit: t.PositiveInt | None = None


class OembedQuery(Params):
    url: t.NonBlankStr
    format: t.Enum("json", nullable=True) = None
    maxheight: t.PositiveInt | None = None
    maxwidth: t.PositiveInt | None = None
