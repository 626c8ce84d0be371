"""QueryFailed: a query that cannot run or that the database refused, with Metabase's error_type.

It is not an ApiError: the processor turns it into the failed-query envelope (`status: "failed"`,
`error`, `error_type`), sent with the one failure status core.query.results.FAILED_STATUS.
"""
from __future__ import annotations


class QueryFailed(Exception):
    """error_type is one of Metabase's: "invalid-query", "missing-required-parameter",
    "invalid-parameter", "driver", "timed-out", "missing-required-permissions", "qp"."""

    def __init__(self, message: str, error_type: str = "invalid-query", **extra):
        super().__init__(message)
        self.message = message
        self.error_type = error_type
        self.extra = extra
