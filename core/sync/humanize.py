"""Display names from database names, as Metabase's humanization strategies make them.

"simple" splits on underscores, hyphens and spaces and capitalises each word, writing "id" as
"ID" (`customer_id` -> "Customer ID"); "none" keeps the name as it is.
"""
from __future__ import annotations

import re

STRATEGIES = ("simple", "none")
_SEPARATORS = re.compile(r"[-_\s]+")


def _word(word: str) -> str:
    return "ID" if word.lower() == "id" else word[:1].upper() + word[1:].lower()


def humanize(name: str, strategy: str = "simple") -> str:
    if strategy == "none" or not name:
        return name
    words = [part for part in _SEPARATORS.split(name) if part]
    return " ".join(_word(w) for w in words) or name


def is_generated(display_name: str | None, name: str) -> bool:
    """Whether a display name is one a strategy made (so sync may redo it), not one a person typed."""
    return display_name is None or any(display_name == humanize(name, s) for s in STRATEGIES)
