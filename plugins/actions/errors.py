"""How an action's execution fails: Metabase answers a failed run with a 400 whose body is a map holding
`message` (plus detail keys), and names unknown parameters with Clojure's set notation."""
from __future__ import annotations

from core.http.errors import ApiError


class ActionFailed(ApiError):
    """400 with Metabase's `{"message": ...}` body (plus any detail keys)."""

    status = 400

    def __init__(self, message: str, **extra):
        super().__init__(message, body={"message": message, **extra})


def clojure_set(values) -> str:
    """How Metabase prints a set of names in its messages: #{"a" "b"}."""
    return "#{" + " ".join(f'"{v}"' for v in sorted(map(str, values))) + "}"


def check_no_extra(values: dict, destination_ids) -> None:
    """400 when a value is sent for a parameter the action does not have (or hides)."""
    extra = set(values) - set(destination_ids)
    if extra:
        raise ActionFailed(f"No destination parameter found for {clojure_set(extra)}. "
                           f"Found: {clojure_set(destination_ids)}", type="invalid-parameter",
                           parameters=values, **{"destination-parameters": sorted(map(str, destination_ids))})
