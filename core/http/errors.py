"""The ApiError hierarchy: every error a request can end in, with the body Metabase sends for it.

Metabase's rule (compat/core.md section 0): an error with only a message sends the bare message as
the body; an error with field errors sends {"errors": ..., "specific-errors": ...}. Bodies here are
always JSON, a JSON string in the first case.
"""
from __future__ import annotations


class ApiError(Exception):
    status = 500
    message = "Internal server error."

    def __init__(self, message: str | None = None, *, body: object = None, headers: dict | None = None):
        super().__init__(message or self.message)
        self.message = message or self.message
        self._body = body
        self.headers = headers or {}

    @property
    def body(self) -> object:
        return self.message if self._body is None else self._body


class Invalid(ApiError):
    """400. With field errors, Metabase's validation shape; without, a bare message."""

    status = 400
    message = "Invalid Request."

    def __init__(self, errors: dict | str | None = None, specific_errors: dict | None = None, **extra):
        if isinstance(errors, str) or errors is None:
            super().__init__(errors)
            return
        body: dict = {"errors": errors}
        if specific_errors is not None:
            body["specific-errors"] = specific_errors
        body.update(extra)
        super().__init__("Invalid Request.", body=body)
        self.errors = errors


class Unauthenticated(ApiError):
    status = 401
    message = "Unauthenticated"


class Forbidden(ApiError):
    status = 403
    message = "You don't have permissions to do that."


class NotFound(ApiError):
    status = 404
    message = "Not found."


class Archived(ApiError):
    status = 404
    message = "The object has been archived."

    def __init__(self):
        super().__init__(body={"message": self.message, "error_code": "archived"})


class Conflict(ApiError):
    status = 409
    message = "Looks like someone else edited the permissions and your data is out of date. Please fetch new data and try again."


class PaymentRequired(ApiError):
    status = 402
    message = "This feature requires a paid plan."


class PayloadTooLarge(ApiError):
    status = 413
    message = "Request body is too large."

    def __init__(self, limit: int | None = None):
        super().__init__(f"Request body is too large (the limit is {limit} bytes)." if limit else None)


class TooManyRequests(ApiError):
    status = 429
    message = "Too many requests."


class NoEndpoint(ApiError):
    status = 404
    message = "API endpoint does not exist."


def check_404(value):
    """Metabase's check-404: the value, or 404 Not found. when it is None."""
    if value is None:
        raise NotFound()
    return value


def check_403(allowed: bool) -> None:
    if not allowed:
        raise Forbidden()
