"""Offset paging as Metabase's paging middleware does it: `limit` and `offset` query parameters.

A request is paged when either parameter is present; the missing one defaults (limit 50, offset 0).
Unpaged listings report `limit` and `offset` as null. A query model mixes in `PagingParams` so the
parameters are validated and documented like any other; the view hands `paging(query)` to the service.
"""
from __future__ import annotations

from dataclasses import dataclass

from .api import Params
from .types import IntGreaterThanOrEqualToZero

DEFAULT_LIMIT = 50


class PagingParams(Params):
    limit: IntGreaterThanOrEqualToZero | None = None
    offset: IntGreaterThanOrEqualToZero | None = None


@dataclass(frozen=True)
class Paging:
    limit: int | None = None
    offset: int | None = None

    @property
    def paged(self) -> bool:
        return self.limit is not None

    def apply(self, rows: list) -> list:
        if not self.paged:
            return rows
        return rows[self.offset:self.offset + self.limit]


def paging(query: PagingParams) -> Paging:
    if query.limit is None and query.offset is None:
        return Paging()
    return Paging(DEFAULT_LIMIT if query.limit is None else query.limit, query.offset or 0)
