"""Pivoted downloads: the pivot query's rows (core.query.pivot.collect) laid out as Metabase 0.57
writes a pivot table to csv and xlsx (metabase.pivot.core + pivot.postprocess, the layout shared
with the app's pivot table).

- Header rows: one per column breakout (its values, each repeated over the cells it spans), plus
  a row of measure names when there are several measures; the last header row starts with the row
  breakouts' titles, the ones above with blanks. With no column breakout, one header row: row
  titles, then measure names. "Row totals" closes the header when there are two or more top-level
  column values and `pivot.show_row_totals` is not false.
- Body: one row per row-breakout combination, every level's value written on each row (no merged
  cells); after a group with more than one child, a "Totals for <value>" row
  (`pivot.show_column_totals`, per-column `pivot_table.column_show_totals`,
  `pivot.condense_duplicate_totals` as Metabase); a "Grand totals" row when there are two or more
  top-level row values. Cells: one per column value x measure, row totals at the end.
- Order: first appearance in the query's rows (ordered by the breakouts), unless a column's
  `pivot_table.column_sort_order` says ascending/descending.

The table is built in memory: a pivot needs every grouping before its first line can be written,
so a pivoted download holds the aggregated rows (bounded by the aggregated row count, never the
raw rows). Formatting is the exporter's: it passes how dimension labels and measure cells are
written.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from .formatting import column_settings

Formatter = Callable[[dict], Callable[[Any], Any]]
GRAND_TOTALS = "Grand totals"
ROW_TOTALS = "Row totals"


class _Node:
    __slots__ = ("raw", "label", "children", "index", "subtotal", "grand", "measure")

    def __init__(self, raw: Any, label: Any = None, *, subtotal: bool = False, grand: bool = False,
                 measure: bool = False):
        self.raw = raw
        self.label = label
        self.children: list[_Node] = []
        self.index: dict = {}
        self.subtotal = subtotal
        self.grand = grand
        self.measure = measure


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _key(value: Any) -> Any:
    """The value as a dict key (typing.Hashable's isinstance is too slow for every cell)."""
    if type(value) in _SCALARS:
        return value
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _setting(settings: dict, key: str, default: bool = True) -> bool:
    """Metabase reads these with a default only when the key is absent; null counts as false."""
    return bool(settings[key]) if key in settings else default


class PivotTable:
    """`cols`/`rows`: the pivot query's columns and rows (pivot-grouping included); `split`:
    core.query.pivot.Split indexes into the columns without pivot-grouping."""

    def __init__(self, cols: list[dict], rows: list[list], split, settings: dict | None, format_rows: bool):
        self.grouping = next(i for i, c in enumerate(cols) if c.get("name") == "pivot-grouping")
        self.columns = [c for i, c in enumerate(cols) if i != self.grouping]
        self.count = self.grouping  # breakouts come first, then pivot-grouping
        self.split = split
        self.settings = settings if isinstance(settings, dict) else {}
        self.format_rows = format_rows
        self.primary: list[list] = []
        self._by_key: dict | None = None
        self.subtotals: dict[tuple, dict[tuple, list]] = {}
        g = self.grouping
        for row in rows:
            values = list(row[:g]) + list(row[g + 1:])
            mask = row[g] or 0
            if mask == 0:
                self.primary.append(values)
                continue
            active = tuple(i for i in range(self.count) if not (mask >> i) & 1)
            self.subtotals.setdefault(active, {})[tuple(_key(values[i]) for i in active)] = \
                [values[v] for v in split.values]

    # ---- titles ----------------------------------------------------------------------------------

    def title(self, index: int) -> str:
        column = self.columns[index]
        if self.format_rows:
            title = column_settings(self.settings, column).get("column_title")
            if title:
                return title
        return column.get("display_name") or column.get("name") or "(empty)"

    # ---- trees -----------------------------------------------------------------------------------

    def _tree(self, indexes: list[int], label: Formatter) -> list[_Node]:
        root = _Node(None)
        for row in self.primary:
            node = root
            for i in indexes:
                raw = row[i]
                k = _key(raw)
                child = node.index.get(k)
                if child is None:
                    child = node.index[k] = _Node(raw)
                    node.children.append(child)
                node = child
        fmts = [label(self.columns[i]) for i in indexes]
        orders = [column_settings(self.settings, self.columns[i]).get("pivot_table.column_sort_order")
                  for i in indexes]
        self._finish(root.children, fmts, orders)
        return root.children

    def _finish(self, nodes: list[_Node], fmts: list, orders: list) -> None:
        if not nodes:
            return
        order = orders[0]
        if order in ("ascending", "descending"):
            nodes.sort(key=functools.cmp_to_key(_compare), reverse=order == "descending")
        for node in nodes:
            node.label = fmts[0](node.raw)
            self._finish(node.children, fmts[1:], orders[1:])

    def _with_subtotals(self, tree: list[_Node]) -> list[_Node]:
        if not _setting(self.settings, "pivot.show_column_totals"):
            return list(tree)
        enabled = [column_settings(self.settings, self.columns[i]).get("pivot_table.column_show_totals") is not False
                   for i in self.split.rows]
        condense = self.settings.get("pivot.condense_duplicate_totals", True) is True

        def visible(node: _Node) -> bool:
            return len(node.children) > 1 or not condense

        def add(node: _Node, flags: list[bool], out: list[_Node]) -> None:
            total = None
            if flags and flags[0] and visible(node):
                total = _Node(node.raw, f"Totals for {_text(node.label)}", subtotal=True)
            kids: list[_Node] = []
            for child in node.children:
                if child.children:
                    add(child, flags[1:], kids)
                else:
                    kids.append(child)
            node.children = kids
            out.append(node)
            if total is not None:
                out.append(total)

        out: list[_Node] = []
        for node in tree:
            add(node, enabled, out)
        return out

    # ---- the grid --------------------------------------------------------------------------------

    def grid(self, label: Formatter, value: Formatter) -> tuple[list[list], int]:
        """(rows of cells, how many of them are header rows)."""
        split = self.split
        row_tree = self._tree(split.rows, label)
        left = self._with_subtotals(row_tree)
        if len(row_tree) > 1 and _setting(self.settings, "pivot.show_column_totals"):
            left.append(_Node(None, GRAND_TOTALS, grand=True))
        col_tree = self._tree(split.cols, label)
        if len(col_tree) > 1 and _setting(self.settings, "pivot.show_row_totals"):
            col_tree.append(_Node(None, ROW_TOTALS, grand=True))

        row_paths = _paths(left) or [([], [])]
        col_paths = [path for path, _ in _paths(col_tree)] or [[]]
        top = self._with_measures(col_tree)
        headers = self._headers(top, left)
        formats = [value(self.columns[v]) for v in split.values]
        blank = [None] * len(formats)
        primary = self._primary()
        col_keys = [(c, tuple(_key(v) for v in c)) for c in col_paths]
        body = []
        for path, labels in row_paths:
            line = list(labels)
            row_key = tuple(_key(v) for v in path)
            short_row = len(path) < len(split.rows)
            for col_path, col_key in col_keys:
                if short_row or len(col_path) < len(split.cols):
                    cells = self._subtotal(col_path, path)
                else:
                    cells = primary.get(col_key + row_key)
                if cells is None:
                    line.extend(blank)
                else:
                    line.extend([None if v is None else f(v) for f, v in zip(formats, cells)])
            body.append(line)
        return headers + body, len(headers)

    def _with_measures(self, col_tree: list[_Node]) -> list[_Node]:
        names = [_Node(None, self.title(v), measure=True) for v in self.split.values]
        if not col_tree:
            return names
        if len(names) <= 1:
            return col_tree

        def graft(node: _Node) -> None:
            if not node.children:
                node.children = names
            else:
                for child in node.children:
                    graft(child)

        for node in col_tree:
            graft(node)
        return col_tree

    def _headers(self, top: list[_Node], left: list[_Node]) -> list[list]:
        left_depth = max((_height(n) for n in left), default=0) + 1
        corner = [self.title(i) for i in self.split.rows[:left_depth]]
        if not top:
            return [corner]
        items = list(_flatten(top))
        depth = max(d for d, _, _ in items)
        rows = [[None] * len(corner) for _ in range(depth)] + [list(corner)]
        for d, node, span in items:
            rows[d].extend([node.label] * span)
        return rows

    def _subtotal(self, col_path: list, row_path: list) -> list | None:
        """A totals cell: the grouping that kept exactly these breakouts, looked up by their values."""
        split = self.split
        pairs = sorted(zip(split.cols[:len(col_path)] + split.rows[:len(row_path)],
                           [_key(v) for v in col_path + row_path]), key=lambda pair: pair[0])
        return self.subtotals.get(tuple(i for i, _ in pairs), {}).get(tuple(v for _, v in pairs))

    def _primary(self) -> dict:
        """Measures of the full-breakout rows by their column then row values."""
        if self._by_key is None:
            order = self.split.cols + self.split.rows
            self._by_key = {tuple(_key(r[i]) for i in order): [r[v] for v in self.split.values]
                            for r in self.primary}
        return self._by_key


def _text(label: Any) -> str:
    return "" if label is None else str(label)


def _compare(a: _Node, b: _Node) -> int:
    x, y = a.raw, b.raw
    if x == y:
        return 0
    if x is None or y is None:
        return -1 if x is None else 1
    if isinstance(x, str) and isinstance(y, str):
        x, y = x.casefold(), y.casefold()
    try:
        return -1 if x < y else (1 if x > y else 0)
    except TypeError:
        return -1 if str(x) < str(y) else 1


def _paths(tree: list[_Node]) -> list[tuple[list, list]]:
    """(raw values path, labels by depth) for every leaf; totals rows and columns have short paths."""
    out: list[tuple[list, list]] = []

    def walk(node: _Node, path: list, labels: list) -> None:
        if node.grand:
            out.append(([], [node.label]))
        elif not node.children:
            out.append((path + [node.raw], labels + [node.label]))
        else:
            for child in node.children:
                walk(child, path + [node.raw], labels + [node.label])

    for node in tree:
        walk(node, [], [])
    width = max((len(labels) for _, labels in out), default=0)
    return [(path, labels + [None] * (width - len(labels))) for path, labels in out]


def _height(node: _Node) -> int:
    return 0 if not node.children else 1 + max(_height(c) for c in node.children)


def _span(node: _Node) -> int:
    return 1 if not node.children else sum(_span(c) for c in node.children)


def _flatten(nodes: list[_Node], depth: int = 0):
    for node in nodes:
        yield depth, node, _span(node)
        yield from _flatten(node.children, depth + 1)
