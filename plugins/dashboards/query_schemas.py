"""Request models of the dashboard query routes: dashcard queries and downloads, filter values,
linked-filter fields and query metadata."""
from __future__ import annotations

from typing import Any

from core.export.response import ExportFormat
from core.http import types as t
from core.http.api import Params

# Metabase: a vector of maps with :id (an id-less one is refused when the parameters are resolved).
Parameters = list[dict[str, Any]] | None


class DashcardPath(Params):
    dashboard_id: t.PositiveInt
    dashcard_id: t.PositiveInt
    card_id: t.PositiveInt


class DashcardExportPath(DashcardPath):
    export_format: ExportFormat


class DashcardQuery(Params):
    parameters: Parameters = None
    dashboard_load_id: t.Str | None = None
    ignore_cache: t.Bool | None = None


class DashcardExport(Params):
    parameters: Parameters = None
    format_rows: t.Bool | None = None
    pivot_results: t.Bool | None = None
    dashboard_load_id: t.Str | None = None


class DashboardId(Params):
    id: t.PositiveInt


class MetadataQuery(Params):
    dashboard_load_id: t.Str | None = None


class ParamPath(Params):
    id: t.PositiveInt
    param_key: t.NonBlankStr


class ParamSearchPath(ParamPath):
    query: t.NonBlankStr


class RemappingQuery(Params):
    value: t.NonBlankStr


class ValidFilterFields(Params):
    filtered: list[t.PositiveInt]
    filtering: list[t.PositiveInt] | None = None


class ActionDashcardPath(Params):
    dashboard_id: t.PositiveInt
    dashcard_id: t.PositiveInt


class ActionPrefill(Params):
    parameters: t.JsonStr


class ActionExecute(Params):
    parameters: t.Map | None = None
    extra_parameters: Any = None
