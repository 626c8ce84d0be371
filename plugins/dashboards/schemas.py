"""Request models of /api/dashboard (the CRUD, layout, sharing and save routes).

A GET body posted back carries read-only keys (`collection`, `can_write`, a dashcard's `card`...):
unknown keys are ignored, as Metabase does, so that round trip is accepted.
"""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field

from core.http import types as t
from core.http.api import Params, as_sent
from core.query.shapes import DatasetQuery

# Columns of the dashboard tables are INTEGER: larger numbers are a 400, never an overflow in the app DB.
INT_MAX = 2**31 - 1
Size = Annotated[t.PositiveInt, Field(le=INT_MAX)]
Place = Annotated[t.IntGreaterThanOrEqualToZero, Field(le=INT_MAX)]
ListFilter = t.Enum("all", "mine", "archived", nullable=True)
Width = t.Enum("fixed", "full")


def _keys_present(*keys: str):
    def check(value: list) -> list:
        for item in value:
            if any(k not in item for k in keys):
                raise ValueError(f"missing {', '.join(keys)}")
        return value
    return check


def _unique_ids(value: list | None) -> list | None:
    if value is not None:
        ids = [item.id for item in value]
        if len(ids) != len(set(ids)):
            raise ValueError("ids are not unique")
    return value


# The spec's dashboard parameters: maps with :id and :type.
Parameters = Annotated[
    list[dict[str, Any]], AfterValidator(_keys_present("id", "type")),
    t.MbType("nullable sequence of parameter must be a map with :id and :type keys",
             ("should be a sequence of maps with :id and :type keys",)),
] | None

EmbeddingParams = Annotated[
    dict[str, t.Enum("disabled", "enabled", "locked")],
    t.MbType("value must be a valid embedding params map.", ("should be a map of disabled, enabled or locked",)),
] | None


class DashboardId(Params):
    id: t.PositiveInt


class GetQuery(Params):
    dashboard_load_id: t.Str | None = None
    # As GET /api/card/:id's: a read that counts no view (the web app's card frames re-read the dashboard).
    ignore_view: t.Bool | None = None


class ListQuery(Params):
    f: ListFilter = None


class SeriesRef(Params):
    id: t.PositiveInt


class ParameterMapping(Params):
    """{parameter_id, target, card_id}: kept as the client sent it (other keys included)."""

    model_config = {**Params.model_config, "extra": "allow"}

    parameter_id: t.NonBlankStr
    target: Any
    card_id: t.PositiveInt | None = None


class DashcardUpdate(Params):
    """One dashcard of PUT's full desired set: a negative id makes a new one."""

    id: t.Int
    size_x: Size
    size_y: Size
    row: Place
    col: Place
    card_id: t.PositiveInt | None = None
    action_id: Size | None = None
    dashboard_tab_id: t.Int | None = None
    parameter_mappings: list[ParameterMapping] | None = None
    visualization_settings: t.Map | None = None
    series: list[SeriesRef] | None = None


class TabUpdate(Params):
    """One tab of PUT's full desired set: a negative id makes a new one; position is its index."""

    id: t.Int
    name: t.NameStr


UNIQUE = t.MbType("value must be seq of maps in which ids are unique", ("should be maps with unique ids",))
Dashcards = Annotated[list[DashcardUpdate], AfterValidator(_unique_ids), UNIQUE]
Tabs = Annotated[list[TabUpdate], AfterValidator(_unique_ids), UNIQUE]


class DashboardCreate(Params):
    name: t.NameStr
    description: t.DescriptionStr | None = None
    parameters: Parameters = None
    cache_ttl: Size | None = None
    collection_id: t.PositiveInt | None = None
    collection_position: Size | None = None


class DashboardUpdate(Params):
    """Metabase's DashUpdates: every key optional."""

    name: t.NameStr | None = None
    description: t.DescriptionStr | None = None
    caveats: t.DescriptionStr | None = None
    points_of_interest: t.DescriptionStr | None = None
    show_in_getting_started: t.Bool | None = None
    enable_embedding: t.Bool | None = None
    embedding_params: EmbeddingParams = None
    parameters: Parameters = None
    position: Size | None = None
    width: Width = None  # Metabase: optional, never null
    auto_apply_filters: t.Bool | None = None
    archived: t.Bool | None = None
    collection_id: t.PositiveInt | None = None
    collection_position: Size | None = None
    cache_ttl: Size | None = None
    dashcards: Dashcards | None = None
    tabs: Tabs | None = None


class CardsUpdate(Params):
    """The deprecated PUT /api/dashboard/:id/cards body."""

    cards: Dashcards
    tabs: Tabs | None = None


class RevertBody(Params):
    revision_id: t.PositiveInt


class SaveCollectionPath(Params):
    parent_collection_id: t.PositiveInt


class SavedCard(Params):
    """A card of a denormalized dashboard: no id yet, saved as a new card."""

    name: t.NameStr
    display: t.NonBlankStr = "table"
    dataset_query: as_sent(DatasetQuery)
    visualization_settings: t.Map | None = None
    description: t.DescriptionStr | None = None
    parameters: list[dict[str, Any]] | None = None
    result_metadata: list[dict[str, Any]] | None = None


class SavedDashcard(Params):
    size_x: Size = 4
    size_y: Size = 4
    row: Place = 0
    col: Place = 0
    card: SavedCard | None = None
    series: list[SavedCard] | None = None
    parameter_mappings: list[ParameterMapping] | None = None
    visualization_settings: t.Map | None = None
    dashboard_tab_id: t.Int | None = None


class SavedDashboard(Params):
    """POST /api/dashboard/save: a denormalized dashboard, as automatic dashboards return it."""

    name: t.NameStr
    description: t.DescriptionStr | None = None
    parameters: Parameters = None
    width: Width = None
    auto_apply_filters: t.Bool | None = None
    dashcards: list[SavedDashcard] | None = None
    tabs: Tabs | None = None
