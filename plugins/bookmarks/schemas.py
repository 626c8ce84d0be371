"""Request models of /api/bookmark."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

from core.http import types as t
from core.http.api import Params

Model = t.Enum("card", "dashboard", "collection")
# bookmark_ordering.item_id is a 32-bit column; ids beyond it cannot name anything.
ItemId = Annotated[int, Field(strict=False, gt=0, le=2**31 - 1),
                   t.MbType("value must be an integer greater than zero.", ("should be a positive int",))]


class BookmarkPath(Params):
    model: Model
    id: ItemId


class Ordering(Params):
    type: Model
    item_id: ItemId


class OrderingBody(Params):
    orderings: list[Ordering]
