"""An alert's condition evaluated over its card's result at send time (Metabase's alert conditions):
"rows" fires when the card returns at least one row (a lone [[null]], what an aggregation over no rows
gives, counts as empty); "goal" compares the last value of the card's main series with its goal line,
at or above it (`above_goal`) or below it.

The goal is the card's visualization setting `graph.goal_value` (`progress.goal` for a progress bar);
the main series is the first of `graph.metrics`, else the second column (the first for a progress bar
or a one-column result). A goal alert on a card without a goal or a numeric last value never fires.
"""
from __future__ import annotations

from dataclasses import dataclass

CONDITIONS = ("rows", "goal")


@dataclass(frozen=True)
class Condition:
    """What an alert waits for; `first_only` archives the alert after its first send."""

    kind: str  # "rows" or "goal"
    above_goal: bool = True
    first_only: bool = False


def is_empty(result: dict) -> bool:
    rows = ((result.get("data") or {}).get("rows")) or []
    return result.get("status") != "completed" or not rows or rows == [[None]]


def goal_value(card) -> float | None:
    settings = card.visualization_settings or {}
    goal = settings.get("progress.goal") if card.display == "progress" else settings.get("graph.goal_value")
    if isinstance(goal, bool) or not isinstance(goal, (int, float)):
        return None
    return float(goal)


def _series_index(card, cols: list[dict]) -> int:
    if card.display == "progress" or len(cols) < 2:
        return 0
    metrics = (card.visualization_settings or {}).get("graph.metrics") or []
    names = [c.get("name") for c in cols]
    if metrics and metrics[0] in names:
        return names.index(metrics[0])
    return 1


def last_value(card, result: dict) -> float | None:
    data = result.get("data") or {}
    rows, cols = data.get("rows") or [], data.get("cols") or []
    if not rows:
        return None
    index = _series_index(card, cols)
    value = rows[-1][index] if index < len(rows[-1]) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def fired(condition: Condition, card, result: dict) -> str | None:
    """What fired, as the message says it ("has results", "has reached its goal", "has gone below its
    goal"), or None when the condition does not hold."""
    if is_empty(result):
        return None
    if condition.kind == "rows":
        return "has results"
    goal, value = goal_value(card), last_value(card, result)
    if goal is None or value is None:
        return None
    if condition.above_goal:
        return "has reached its goal" if value >= goal else None
    return "has gone below its goal" if value < goal else None
