"""Whether a card can be previewed in its collection without parameter values (the
`fully_parameterized` key of card items)."""
from __future__ import annotations

import re
from typing import Any

_TAG = re.compile(r"\{\{\s*([^}]+?)\s*\}\}")
_OPTIONAL = re.compile(r"\[\[.*?\]\]", re.S)


def fully_parameterized(dataset_query: Any) -> bool:
    """Can the card run without parameter values? A native query is when every tag outside an
    optional [[...]] block is a field filter, snippet or card reference or has a default, and every
    required tag has a default (Metabase's rule, used for collection previews)."""
    if not isinstance(dataset_query, dict):
        return True
    native = dataset_query.get("native")
    if not isinstance(native, dict) or not isinstance(native.get("template-tags"), dict):
        return True
    tags = native["template-tags"]
    text = native.get("query") if isinstance(native.get("query"), str) else ""
    obligatory = {name for name in _TAG.findall(_OPTIONAL.sub("", text))}
    for name in obligatory:
        tag = tags.get(name)
        if not isinstance(tag, dict):
            return False
        if tag.get("type") not in ("dimension", "snippet", "card") and tag.get("default") is None:
            return False
    return all(not (isinstance(t, dict) and t.get("required")) or t.get("default") is not None
               for t in tags.values())
