"""Request shapes of /api/pulse, with Metabase's error texts."""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field

from core.http.api import Params, Shape, as_sent
from core.http.types import (
    BIGINT_MAX,
    Bool,
    BoolStr,
    Enum,
    IntGreaterThanOrEqualToZero,
    Map,
    MbType,
    NameStr,
    PositiveInt,
    Str,
)

from .channels import CHANNEL_TYPES, DAYS, FRAMES, SCHEDULES

CARDS_MESSAGE = ("one or more value must be a map with the following keys `(collection_id, description, display, "
                 "id, include_csv, include_xls, name, dashboard_id, parameter_mappings)`, or value must be a map "
                 "with the keys `id`, `include_csv`, `include_xls`, and `dashboard_card_id`., or value must be a "
                 "map with the keys `include_csv`, `include_xls`, and `dashboard_card_id`.")
MAX_CARDS = 200


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= BIGINT_MAX


def _card_refs(refs: list[dict]) -> list[dict]:
    """Each entry needs a card id; include_csv, include_xls (booleans, false when absent) and the
    dashboard card id (or null) are kept, the hybrid keys (name, display...) are the client's echo."""
    out = []
    for ref in refs:
        if not isinstance(ref, dict):
            raise ValueError("not a map")
        if not _positive(ref.get("id")):
            raise ValueError("card id")
        for key in ("include_csv", "include_xls", "format_rows", "pivot_results"):
            if ref.get(key) is not None and not isinstance(ref[key], bool):
                raise ValueError(key)
        if ref.get("dashboard_card_id") is not None and not _positive(ref["dashboard_card_id"]):
            raise ValueError("dashboard card id")
        out.append({"id": ref["id"], "include_csv": bool(ref.get("include_csv")),
                    "include_xls": bool(ref.get("include_xls")), "format_rows": ref.get("format_rows") is not False,
                    "pivot_results": bool(ref.get("pivot_results")),
                    "dashboard_card_id": ref.get("dashboard_card_id")})
    return out


# Elements are typed Any and checked by the validators, so that a bad element gets the list's message.
CardRefs = Annotated[list[Any], Field(min_length=1, max_length=MAX_CARDS), AfterValidator(_card_refs),
                     MbType(CARDS_MESSAGE, ("invalid type",))]
CHANNELS_MESSAGE = MbType("one or more map", ("invalid type",))


class Recipient(Shape):
    """A user (by id; its address, when given, must be the user's) or a raw e-mail address."""

    id: PositiveInt | None = None
    email: Str | None = None


class Channel(Shape):
    """A pulse channel as clients send it (a GET round trip adds keys, which are kept): its kind, its
    schedule and who receives it. The rules between keys (which schedule needs which) are
    plugins.subscriptions.channels.normalise's."""

    id: PositiveInt | None = None
    channel_type: Enum(*CHANNEL_TYPES)
    channel_id: PositiveInt | None = None
    enabled: Bool | None = None
    schedule_type: Enum(*SCHEDULES)
    schedule_hour: Annotated[IntGreaterThanOrEqualToZero, Field(le=23)] | None = None
    schedule_day: Enum(*DAYS, nullable=True) = None
    schedule_frame: Enum(*FRAMES, nullable=True) = None
    details: Map | None = None
    recipients: list[Recipient] | None = None


# A channel that is not a map is named as the list's fault, with the list's message.
Channels = Annotated[list[Annotated[as_sent(Channel), CHANNELS_MESSAGE]], Field(min_length=1, max_length=10),
                     CHANNELS_MESSAGE]
Parameters = Annotated[list[Map], Field(max_length=100),
                       MbType("nullable sequence of map", ("invalid type",))]


class PulseId(Params):
    id: PositiveInt


class ListQuery(Params):
    archived: BoolStr | None = None
    dashboard_id: PositiveInt | None = None
    creator_or_recipient: BoolStr | None = None


class PngQuery(Params):
    width: PositiveInt | None = None


class TestPulse(Params):
    name: NameStr
    cards: CardRefs
    channels: Channels
    skip_if_empty: Bool | None = None
    collection_id: PositiveInt | None = None
    collection_position: PositiveInt | None = None
    dashboard_id: PositiveInt | None = None


class NewPulse(TestPulse):
    parameters: Parameters | None = None


class PulseChanges(Params):
    name: NameStr | None = None
    cards: CardRefs | None = None
    channels: Channels | None = None
    skip_if_empty: Bool | None = None
    collection_id: PositiveInt | None = None
    collection_position: PositiveInt | None = None
    archived: Bool | None = None
    parameters: Parameters | None = None
