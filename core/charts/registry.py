"""The display registry and what a display function is given.

A display is `fn(chart: ChartInput) -> dict`, registered with `@display("bar", ...)`: it returns a
Vega-Lite spec WITHOUT top-level width/height/config/background/autosize (core.charts.render adds those
from the request and the theme, so every display gets sizes, themes and determinism the same way).
Display modules live in core/charts/displays/ and import this module (`from ..registry import ...`),
never the `core.charts` package, which imports them (tests/test_layout.py refuses the cycle).

Rows arrive JSON-ready: numbers as int/float (Decimal converted), booleans and text as they are, temporal
values as ISO-8601 text of their wall clock with a "Z" ("2024-01-05T00:00:00Z") so Vega reads them
as UTC whatever the machine's zone: use `"scale": {"type": "utc"}` and utc time units on temporal axes
(then `axis_format`'s time formats are applied in UTC too). Data labels and tooltips: write the text in
Python with `format_value` (Vega-Lite text marks cannot take a labelExpr).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from . import format as fmt
from .theme import Theme

Display = Callable[["ChartInput"], dict]
DISPLAYS: dict[str, Display] = {}
FALLBACK = "table"


@dataclass(frozen=True)
class ChartInput:
    display: str                # the card's display
    settings: dict              # visualization_settings as stored on the card
    cols: list[dict]            # Metabase result columns
    rows: list[list]            # the rows to draw, already limited by the renderer
    row_count: int              # the result's total rows ("showing N of M")
    theme: Theme
    width: int
    height: int
    drill: bool = False         # marks carry the row they draw (core.charts.drill), for pages that drill
    _formatters: dict = field(default_factory=dict, compare=False, repr=False)

    def col_index(self, name: str | None) -> int | None:
        """The index of the column called `name` (its name, else its display name); None if absent."""
        if name is None:
            return None
        for attribute in ("name", "display_name"):
            for index, column in enumerate(self.cols):
                if column.get(attribute) == name:
                    return index
        return None

    def column_settings(self, index: int) -> dict:
        """The column's effective settings (its own `settings` overlaid by the card's column_settings)."""
        return fmt.settings_of(self.cols[index], self.settings)

    def title(self, index: int) -> str:
        """The column's title: column_settings' column_title, else its display name, else its name."""
        column = self.cols[index]
        return str(self.column_settings(index).get("column_title") or column.get("display_name")
                   or column.get("name") or "")

    def is_number(self, index: int) -> bool:
        """A measure-like number (not an id, not an extraction unit such as day-of-week)."""
        return fmt.is_number(self.cols[index])

    def is_temporal(self, index: int) -> bool:
        return fmt.is_temporal(self.cols[index])

    def format_value(self, index: int, value: Any, compact: bool = False) -> str:
        """`value` of column `index` as text, honouring column_settings and the temporal unit."""
        writer = self._formatters.get(index)
        if writer is None:
            writer = self._formatters[index] = fmt.value_formatter(self.cols[index], self.settings)
        return writer(value, compact)

    def axis_format(self, index: int) -> dict:
        """Vega-Lite axis properties ({"format", "formatType"} or {"labelExpr"}) for column `index`, or {}."""
        return fmt.axis_format(self.cols[index], self.settings)

    def setting(self, key: str, default: Any = None) -> Any:
        """A visualization setting, `default` when absent or null."""
        value = self.settings.get(key)
        return default if value is None else value


def display(*names: str) -> Callable[[Display], Display]:
    """Register the decorated function as the spec builder of these display names."""

    def register(fn: Display) -> Display:
        for name in names:
            existing = DISPLAYS.get(name)
            if existing is not None and existing is not fn:
                raise ValueError(f"Display {name!r} is registered twice: by {_qualified(existing)} "
                                 f"and by {_qualified(fn)}")
            DISPLAYS[name] = fn
        return fn

    return register


def _qualified(fn: Display) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


def spec_for(chart: ChartInput) -> dict:
    """The display's Vega-Lite spec; an unknown display is drawn as a table."""
    builder = DISPLAYS.get(chart.display) or DISPLAYS[FALLBACK]
    return builder(chart)
