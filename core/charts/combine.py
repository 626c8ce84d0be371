"""Several cards drawn as one chart, as a Metabase dashcard with `series` draws them: each card's series
become series of the main card's chart, named by their card (the card's name, or "card: series" when a
card has several), on the main card's x axis, display and settings.

The cards are laid into one input with one metric column per series (a row per point, the other series'
cells null, which the graph displays skip), so each series keeps its own card's column: its type and
its number format (the card's column settings go with the column), and the graph displays' auto split
(graph.y_axis.auto_split) gives series of very different sizes a second y axis, as Metabase does. Each
card's points come from its own graph columns (displays.series.build_graph over its own settings), so
cards with different column names combine.
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
    drawn: list[tuple[ChartInput, object, str, dict]] = []  # (its input, its series, title, series settings)
    parts = [(main_name, main, main_graph, None)] + [(name, chart, build_graph(chart), display)
                                                     for name, chart, display in extras]
    for name, chart, graph, display in parts:
        if graph is None:
            continue
        several = len(graph.series) > 1
        for one in graph.series:
            title = f"{name}: {one.title}" if several else (name or one.title)
            # The main card's settings name a series by its title; a series card's own display is its
            # series' default display, the main card's series keep their own settings.
            own = one.settings if display is None else (
                {"display": display} if display in SERIES_DISPLAYS else {})
            drawn.append((chart, one, title, {"title": title, **own, **(stored.get(title) or {})}))
    x_col = main.cols[main_graph.x]
    cols, series_settings = [x_col], {}
    for position, (chart, one, _title, entry) in enumerate(drawn):
        name = f"{SERIES_COLUMN}_{position}"
        source = chart.cols[one.metric]
        # The series' column as its card has it, with that card's formatting; no field ref or id, so that
        # the main card's column settings (keyed by name or ref) never reach another card's column.
        cols.append({key: value for key, value in source.items() if key not in ("field_ref", "id", "name")}
                    | {"name": name, "source": "aggregation", "settings": chart.column_settings(one.metric)})
        series_settings[name] = entry
    rows: list[list] = []
    width = len(drawn)
    for position, (_chart, one, _title, _entry) in enumerate(drawn):
        for x, y in one.points:
            row = [x] + [None] * width
            row[position + 1] = y
            rows.append(row)
    settings = {**main.settings, "series_settings": series_settings, "graph.dimensions": [x_col.get("name")],
                "graph.metrics": [col["name"] for col in cols[1:]]}
    return replace(main, settings=settings, cols=cols, rows=rows,
                   row_count=main.row_count + sum(chart.row_count for _, chart, _ in extras), _formatters={})
