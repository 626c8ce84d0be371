"""The errors of an outbound HTTP request, each a 400 in Metabase's bare-message shape: the request
was the user's (an action, a webhook), so its failure is a bad request, never a server error."""
from __future__ import annotations

from core.http.errors import Invalid


class OutboundError(Invalid):
    """The request could not be completed (name not found, connection, TLS, timeout, size)."""


class OutboundRefused(OutboundError):
    """The destination, URL, method or headers are not allowed; nothing was sent."""


class OutboundTimeout(OutboundError):
    """The destination did not connect or answer in time."""


class ResponseTooLarge(OutboundError):
    """The response body passed the size cap; what was read is discarded."""
