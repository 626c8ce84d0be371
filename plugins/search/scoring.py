"""Relevance, as Metabase's in-place search scores it: text scorers over the name and description
(exact token matches, consecutive tokens, share of tokens found, share of the text covered, common
prefix), then small bonuses for pinned and recently changed items and for the kind of object.
"""
from __future__ import annotations

import datetime as dt

from core.content.search import normalize, tokenize

TEXT_SCORERS_WEIGHT = 10
STALE_DAYS = 180
# Earlier kinds rank higher when everything else is equal (Metabase's models-search-order).
MODEL_ORDER = ["dashboard", "metric", "segment", "indexed-entity", "card", "dataset", "collection", "table",
               "action", "database"]


def _occurrences(query: list[str], match: list[str], exact: bool) -> int:
    if exact:
        return sum(1 for q in query if q in match)
    return sum(1 for q in query if any(q in m for m in match))


def _consecutive(query: list[str], match: list[str]) -> int:
    """Length of the longest run of query tokens found, in order, in consecutive match tokens."""
    query, match = query[:30], match[:30]
    best = 0
    table = [[0] * (len(match) + 1) for _ in range(len(query) + 1)]
    for i in range(1, len(query) + 1):
        for j in range(1, len(match) + 1):
            if query[i - 1] in match[j - 1]:
                table[i][j] = table[i - 1][j - 1] + 1
                best = max(best, table[i][j])
    return best


def _prefix(query: list[str], match: list[str]) -> float:
    q, m = " ".join(query), " ".join(match)
    common = 0
    for a, b in zip(q, m):
        if a != b:
            break
        common += 1
    chars = sum(len(t) for t in query)
    return common / chars if chars else 0.0


def text_score(query_tokens: list[str], text: str | None) -> float:
    """0..1: how well `text` matches the query; 0 means no match at all."""
    if not text or not query_tokens:
        return 0.0
    match = tokenize(normalize(text))
    if not match:
        return 0.0
    found = _occurrences(query_tokens, match, exact=False)
    if not found:
        return 0.0
    n = len(query_tokens)
    weighted = (4 * _occurrences(query_tokens, match, exact=True) / n
                + 2 * _consecutive(query_tokens, match) / n
                + 2 * found / n
                + 1 * min(found / len(match), 1)
                + 1 * _prefix(query_tokens, match))
    return weighted / 10


def texts_score(query_tokens: list[str], texts: list[str | None]) -> float:
    """The best text_score of an item's texts: the part of its score the query alone decides."""
    return max((text_score(query_tokens, t) for t in texts), default=0.0)


def combine(query_tokens: list[str], text: float, *, model: str, pinned: bool, updated_at: dt.datetime | None,
            now: dt.datetime) -> float:
    """The combined score of one result from its texts_score; 0 when a query was given and nothing
    matched it."""
    if query_tokens and text <= 0:
        return 0.0
    days = STALE_DAYS if updated_at is None else max((now - updated_at).days, 0)
    recency = max(STALE_DAYS - days, 0) / STALE_DAYS
    rank = MODEL_ORDER[::-1].index(model) / len(MODEL_ORDER) if model in MODEL_ORDER else 0
    parts = [(2, 1.0 if pinned else 0.0), (1.5, recency), (0.5, rank)]
    if query_tokens:
        parts.append((TEXT_SCORERS_WEIGHT, text))
    return sum(w * s for w, s in parts) / sum(w for w, _ in parts)

