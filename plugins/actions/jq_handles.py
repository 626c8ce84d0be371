"""An HTTP action's response_handle and error_handle: jq expressions (Metabase runs JQ 1.6 through
jackson-jq; here the jq library itself, through the `jq` package). An expression is checked when the
action is saved (it must compile and yield at most one result on an empty response) and evaluated on
`{body, headers, status}` of the response when the action runs."""
from __future__ import annotations

from typing import Any

import jq


class JsonQueryError(ValueError):
    """The expression does not compile, fails on its input, or yields more than one result."""


def apply(document: Any, expression: str) -> Any:
    """The single result of `expression` on `document` (None when it yields nothing)."""
    try:
        results = jq.compile(expression).input_value(document).all()
    except ValueError as exc:
        raise JsonQueryError(str(exc).splitlines()[0] if str(exc) else "invalid json-query") from None
    if len(results) > 1:
        raise JsonQueryError(f"Too many results returned: {results!r}")
    return results[0] if results else None


def check(expression: str) -> str:
    """A pydantic validator: the expression as given, once it runs on an empty document."""
    apply({}, expression)
    return expression
