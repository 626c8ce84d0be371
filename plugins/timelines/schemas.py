"""Request models of the timeline endpoints (Metabase's field types and error texts)."""
from __future__ import annotations

from core.content.timelines import ICONS
from core.http.api import Params
from core.http.types import (
    Bool,
    BoolStr,
    DescriptionStr,
    Enum,
    NameStr,
    StoredPositiveInt,
    Str,
    TemporalStr,
)

Icon = Enum(*ICONS, nullable=True)
Include = Enum("events", nullable=True)


class Id(Params):
    id: StoredPositiveInt


class ListQuery(Params):
    include: Include = None
    archived: BoolStr | None = None


class TimelineQuery(Params):
    include: Include = None
    archived: BoolStr | None = None
    start: TemporalStr | None = None
    end: TemporalStr | None = None


class CollectionTimelinesQuery(Params):
    include: Include = None
    archived: Bool | None = None


class CardTimelinesQuery(Params):
    include: Include = None
    start: TemporalStr | None = None
    end: TemporalStr | None = None


class NewTimeline(Params):
    name: NameStr
    default: Bool | None = None
    description: DescriptionStr | None = None
    icon: Icon = None
    collection_id: StoredPositiveInt | None = None
    archived: Bool | None = None


class TimelineChanges(Params):
    name: NameStr | None = None
    default: Bool | None = None
    description: DescriptionStr | None = None
    icon: Icon = None
    collection_id: StoredPositiveInt | None = None
    archived: Bool | None = None


class NewEvent(Params):
    name: NameStr
    description: DescriptionStr | None = None
    timestamp: TemporalStr
    time_matters: Bool | None = None
    timezone: Str
    icon: Icon = None
    timeline_id: StoredPositiveInt
    # Where the client created the event (Metabase sends it to analytics only).
    source: Enum("collections", "question", nullable=True) = None
    question_id: StoredPositiveInt | None = None
    archived: Bool | None = None


class EventChanges(Params):
    name: NameStr | None = None
    description: DescriptionStr | None = None
    timestamp: TemporalStr | None = None
    time_matters: Bool | None = None
    timezone: Str | None = None
    icon: Icon = None
    timeline_id: StoredPositiveInt | None = None
    archived: Bool | None = None


def present(body: Params, nullable: tuple[str, ...]) -> dict:
    """The keys a PUT sent: nullable columns take null, the others ignore it (Metabase's
    select-keys-when :present / :non-nil)."""
    return {key: getattr(body, key) for key in body.model_fields_set
            if getattr(body, key) is not None or key in nullable}
