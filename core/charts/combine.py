"""Several cards drawn as one chart, as a Metabase dashcard with `series` draws them: each card's series
become series of the main card's chart, named by their card (the card's name, or "card: series" when a
card has several), on the main card's axes, display and settings.

The cards are stacked into one input with a synthetic breakout column holding each point's series name,
so the graph displays draw the combination with the breakout machinery they already have (colours,
series_settings by name, stacking, legends). Each card's points come from its own graph columns
(displays.series.build_graph over its own settings), so cards with different column names combine.
"""
from __future__ import annotations

from dataclasses import replace

from .displays.series import SERIES_DISPLAYS, build_graph
from .registry import ChartInput

# The displays Metabase lets a dashcard combine cards on.
COMBINABLE = frozenset({"bar", "line", "area", "combo"})
SERIES_COLUMN = "__tessera_series"


def card_name(card) -> str:
    """A card's name (a dict or a Card row), the title of its series in a combination."""
    name = card.get("name") if isinstance(card, dict) else getattr(card, "name", None)
    return str(name or "")


def combined(main_name: str, main: ChartInput, extras: list[tuple[str, ChartInput, str]]) -> ChartInput:
    """`main` with the series of `extras` ((card name, its input, its display) each) drawn on it; `main`
    itself when its display combines nothing or it has no graph. An extra without a graph is left out."""
    main_graph = build_graph(main) if main.display in COMBINABLE and extras else None
    if main_graph is None:
        return main
    stored = main.settings.get("series_settings") if isinstance(main.settings.get("series_settings"), dict) else {}
    series_settings: dict = {}
    rows: list[list] = []
    parts = [(main_name, main_graph, None)] + [(name, build_graph(chart), display) for name, chart, display in extras]
    for name, graph, display in parts:
        if graph is None:
            continue
        several = len(graph.series) > 1
        for one in graph.series:
            title = f"{name}: {one.title}" if several else (name or one.title)
            # The main card's settings name a series by its title; a series card's own display is its
            # series' default display, the main card's series keep their own settings.
            own = one.settings if display is None else (
                {"display": display} if display in SERIES_DISPLAYS else {})
            series_settings[title] = {**own, **(stored.get(title) or {})}
            rows.extend([x, title, y] for x, y in one.points)
    x_col, metric_col = main.cols[main_graph.x], main.cols[main_graph.metrics[0]]
    series_col = {"name": SERIES_COLUMN, "display_name": "Series", "base_type": "type/Text",
                  "effective_type": "type/Text", "source": "breakout"}
    settings = {**main.settings, "series_settings": series_settings,
                "graph.dimensions": [x_col.get("name"), SERIES_COLUMN], "graph.metrics": [metric_col.get("name")]}
    return replace(main, settings=settings, cols=[x_col, series_col, metric_col], rows=rows,
                   row_count=main.row_count + sum(chart.row_count for _, chart, _ in extras), _formatters={})
