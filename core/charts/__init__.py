"""Charts: a card and its query result drawn as a picture (SVG, PNG, PDF) from its display and
visualization settings, for every plugin that needs one (exports, sharing, subscriptions).

card + result -> ChartInput (core.charts.render) -> Vega-Lite spec (core.charts.displays, through the
registry in core.charts.registry) -> vl-convert. Formats and themes: core.charts.format, core.charts.theme.
It knows nothing of HTTP, permissions or how the result was obtained.
"""
from . import displays  # noqa: F401  (registers every display)
from .render import FORMATS, chart_input, chart_spec, draw, render_card, warm, writer
from .theme import THEMES, Theme

__all__ = ["FORMATS", "THEMES", "Theme", "chart_input", "chart_spec", "draw", "render_card", "warm", "writer"]
