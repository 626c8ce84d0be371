"""What more than one plugin needs about timelines: the icons and how a stored icon is shown
(the timelines plugin and the collection items listing)."""
from __future__ import annotations

ICONS = ("star", "cake", "mail", "warning", "bell", "cloud")
DEFAULT_ICON = "star"


def shown_icon(icon: str | None) -> str | None:
    # Metabase removed the "balloons" icon; rows that still have it read back as the default.
    return DEFAULT_ICON if icon == "balloons" else icon
