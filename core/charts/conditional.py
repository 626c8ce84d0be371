"""Conditional formatting of table cells (`table.column_formatting`, Metabase's rules): which cells and
rows get a background colour. One place decides, so the app's HTML table, the drawn table (exports,
e-mails) and anything else colour the same cells.

Rules, in their stored order: `{"type": "single", "columns": [names], "operator", "value", "color",
"highlight_row"}` colours a cell (or its whole row) whose value passes the comparison; `{"type": "range",
"columns", "colors": [low, high], "min_type"/"max_type": null|"all"|"custom", "min_value", "max_value"}`
shades a number between the column's smallest and largest value (null), every ruled column's ("all"),
or the stored bounds ("custom"). A cell takes its first matching rule; a row colour shows where no cell
rule applies. Colours are written with Metabase's transparency (cells 0.65, rows 0.2, ranges 0.75),
so text stays readable in both themes.
"""
from __future__ import annotations

import re
from typing import Any

CELL_ALPHA, ROW_ALPHA, RANGE_ALPHA = 0.65, 0.2, 0.75
OPERATORS = ("=", "!=", "<", ">", "<=", ">=", "is-null", "not-null", "contains", "does-not-contain",
             "starts-with", "ends-with", "is-true", "is-false")
_HEX = re.compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")


def rgb(color: Any) -> tuple[int, int, int] | None:
    """#rgb or #rrggbb as numbers; None for anything else."""
    match = _HEX.match(color.strip()) if isinstance(color, str) else None
    if match is None:
        return None
    digits = match.group(1)
    if len(digits) == 3:
        digits = "".join(d * 2 for d in digits)
    return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)


def rgba(color: tuple[int, int, int], alpha: float) -> str:
    return f"rgba({color[0]}, {color[1]}, {color[2]}, {alpha})"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def passes(operator: str, value: Any, target: Any) -> bool:
    """Whether a cell's `value` passes `operator` against the rule's `target`."""
    if operator == "is-null":
        return value is None
    if operator == "not-null":
        return value is not None
    if operator in ("is-true", "is-false"):
        return value is (operator == "is-true")
    if value is None:
        return False
    if operator in ("contains", "does-not-contain", "starts-with", "ends-with"):
        text, part = str(value).casefold(), str(target if target is not None else "").casefold()
        found = {"contains": part in text, "does-not-contain": part not in text,
                 "starts-with": text.startswith(part), "ends-with": text.endswith(part)}
        return found[operator]
    left, right = _number(value), _number(target)
    if left is None or right is None:
        left, right = str(value), str(target)
        if operator not in ("=", "!="):
            return False
    return {"=": left == right, "!=": left != right, "<": left < right, ">": left > right,
            "<=": left <= right, ">=": left >= right}.get(operator, False)


def rules(settings: dict | None) -> list[dict]:
    """The stored rules that can apply (a list of dicts naming columns and a known type)."""
    stored = (settings or {}).get("table.column_formatting")
    if not isinstance(stored, list):
        return []
    return [rule for rule in stored if isinstance(rule, dict) and rule.get("type") in ("single", "range")
            and isinstance(rule.get("columns"), list)]


def _bounds(rule: dict, names: list[str], rows: list[list], column: int) -> tuple[float, float] | None:
    def extreme(kind: str, pick) -> float | None:
        if rule.get(f"{kind}_type") == "custom":
            return _number(rule.get(f"{kind}_value"))
        indexes = [names.index(n) for n in rule["columns"] if n in names] if rule.get(f"{kind}_type") == "all" \
            else [column]
        values = [v for row in rows for i in indexes if i < len(row) and (v := _number(row[i])) is not None]
        return pick(values) if values else None

    low, high = extreme("min", min), extreme("max", max)
    return None if low is None or high is None else (low, high)


def cell_colors(cols: list[dict], rows: list[list], settings: dict | None,
                bounds_rows: list[list] | None = None) -> list[list[str | None]] | None:
    """Each cell's background (rgba text or None), row by row; None when no rule applies to these
    columns. `bounds_rows` are the rows a range's smallest and largest values come from (every row of
    the result, when `rows` is one page of it)."""
    found = rules(settings)
    names = [str(col.get("name")) for col in cols]
    if not found or not any(name in rule["columns"] for rule in found for name in names):
        return None
    ranges: dict = {}
    for position, rule in enumerate(found):
        colors = rule.get("colors") if isinstance(rule.get("colors"), list) else []
        ends = [rgb(c) for c in colors[:2]]
        if rule["type"] == "range" and len(ends) == 2 and None not in ends:
            for name in rule["columns"]:
                if name in names:
                    ranges[(position, name)] = (ends, _bounds(rule, names, bounds_rows or rows, names.index(name)))
    out = []
    for row in rows:
        cells: list[str | None] = [None] * len(cols)
        row_color = None
        for j, name in enumerate(names):
            value = row[j] if j < len(row) else None
            for position, rule in enumerate(found):
                if name not in rule["columns"]:
                    continue
                if rule["type"] == "single":
                    color = rgb(rule.get("color"))
                    if color is None or not passes(str(rule.get("operator") or "="), value, rule.get("value")):
                        continue
                    if rule.get("highlight_row"):
                        row_color = row_color or rgba(color, ROW_ALPHA)
                        continue
                    cells[j] = rgba(color, CELL_ALPHA)
                    break
                shade = _shade(ranges.get((position, name)), _number(value))
                if shade is not None:
                    cells[j] = shade
                    break
        out.append([cell or row_color for cell in cells])
    return out


def _shade(found, value: float | None) -> str | None:
    if found is None or value is None or found[1] is None:
        return None
    (low_color, high_color), (low, high) = found
    share = 0.5 if high == low else min(1.0, max(0.0, (value - low) / (high - low)))
    mixed = tuple(round(a + (b - a) * share) for a, b in zip(low_color, high_color))
    return rgba(mixed, RANGE_ALPHA)
