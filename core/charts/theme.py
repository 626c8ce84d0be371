"""Chart themes: the colours and font every display draws with, and the Vega-Lite `config` built from
them. A display asks the theme (`chart.theme.color(i)`, `.text`, `.grid`...) and never names a colour of
its own, so that dark and light (and any later theme) change every chart at once."""
from __future__ import annotations

from dataclasses import dataclass, field

# Metabase's chart accent colours, in the order it gives them to series.
PALETTE = ("#509EE3", "#88BF4D", "#A989C5", "#EF8C8C", "#F9D45C", "#F2A86F", "#98D9D9", "#7172AD")
# The font vl-convert bundles: a system font would make the output depend on the machine.
FONT = "Liberation Sans"


@dataclass(frozen=True)
class Theme:
    name: str
    background: str
    text: str            # titles, labels, scalar numbers
    muted: str           # axis labels, footers, secondary text
    grid: str            # grid lines, table row rules
    border: str          # axis domain lines, table header rule
    positive: str        # smartscalar increase, progress reached
    negative: str        # smartscalar decrease, gauge red segment
    palette: tuple[str, ...] = PALETTE
    font: str = FONT
    font_size: int = 12
    extra: dict = field(default_factory=dict)

    def color(self, index: int) -> str:
        """The colour of series `index` (cycling through the palette)."""
        return self.palette[index % len(self.palette)]

    def config(self) -> dict:
        """The Vega-Lite `config` block the renderer puts on every spec."""
        label = {"labelColor": self.muted, "titleColor": self.text, "labelFont": self.font, "titleFont": self.font,
                 "labelFontSize": self.font_size - 1, "titleFontSize": self.font_size, "titleFontWeight": "bold"}
        return {
            "font": self.font,
            "background": self.background,
            "view": {"stroke": None},
            "axis": {**label, "gridColor": self.grid, "domainColor": self.border, "tickColor": self.border},
            "legend": {**label, "orient": "bottom", "titleFontSize": self.font_size - 1},
            "header": {"labelColor": self.muted, "titleColor": self.text, "labelFont": self.font,
                       "titleFont": self.font},
            "title": {"color": self.text, "font": self.font, "fontSize": self.font_size + 2},
            "text": {"color": self.text, "font": self.font},
            "mark": {"font": self.font},
            "range": {"category": list(self.palette)},
        }


LIGHT = Theme("light", background="#FFFFFF", text="#4C5773", muted="#949AAB", grid="#F0F0F0", border="#DCDFE0",
              positive="#84BB4C", negative="#ED6E6E")
DARK = Theme("dark", background="#2B2F36", text="#E8EAED", muted="#A7ACB4", grid="#3D424B", border="#5A606B",
             positive="#9CCF63", negative="#F28B8B")
THEMES = {theme.name: theme for theme in (LIGHT, DARK)}


def theme_named(name: str | Theme | None) -> Theme:
    """The theme called `name` (a Theme passes through); ValueError names the known ones."""
    if isinstance(name, Theme):
        return name
    if name is None:
        return LIGHT
    try:
        return THEMES[name]
    except KeyError:
        raise ValueError(f"Unknown chart theme {name!r}; known: {', '.join(sorted(THEMES))}") from None
