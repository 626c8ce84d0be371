"""core.export.pivot on hand-made pivot rows: Metabase's layout rules one by one."""
from core.export.pivot import PivotTable
from core.query.pivot import PIVOT_GROUPING, Split

A = {"name": "A", "display_name": "A", "source": "breakout"}
B = {"name": "B", "display_name": "B", "source": "breakout"}
M1 = {"name": "m1", "display_name": "M one", "source": "aggregation"}
M2 = {"name": "m2", "display_name": "M two", "source": "aggregation"}
COLS = [A, B, PIVOT_GROUPING, M1, M2]
# Every grouping of A x B: bitmask bits are the breakouts left out (1: A, 2: B).
ROWS = [
    ["a1", "x", 0, 1, 10], ["a1", "y", 0, 2, 20], ["a2", "x", 0, 4, 40],
    [None, "x", 1, 5, 50], [None, "y", 1, 2, 20],
    ["a1", None, 2, 3, 30], ["a2", None, 2, 4, 40],
    [None, None, 3, 7, 70],
]


def grid(split, settings=None, rows=ROWS):
    same = lambda column: (lambda v: v)  # noqa: E731
    return PivotTable(COLS, rows, split, settings or {}, False).grid(same, same)


def test_rows_by_columns_with_two_measures():
    lines, headers = grid(Split([0], [1], [2, 3]))
    assert headers == 2
    assert lines == [
        [None, "x", "x", "y", "y", "Row totals", "Row totals"],
        ["A", "M one", "M two", "M one", "M two", "M one", "M two"],
        ["a1", 1, 10, 2, 20, 3, 30],
        ["a2", 4, 40, None, None, 4, 40],
        ["Grand totals", 5, 50, 2, 20, 7, 70],
    ]


def test_measure_order_and_totals_switched_off():
    lines, _ = grid(Split([0], [1], [3]), {"pivot.show_row_totals": False, "pivot.show_column_totals": False})
    assert lines == [["A", "x", "y"], ["a1", 10, 20], ["a2", 40, None]]


def test_only_column_breakouts_give_nested_ragged_headers():
    # Both breakouts on top: a header row per breakout, no row labels, one body row.
    lines, headers = grid(Split([], [0, 1], [2]))
    assert headers == 2
    assert lines == [["a1", "a1", "a2", "Row totals"], ["x", "y", "x"], [1, 2, 4, 7]]


def test_sort_order_nulls_and_uncondensed_totals():
    rows = [["b", "x", 0, 1, 1], [None, "x", 0, 2, 2], ["a", "x", 0, 3, 3],
            [None, None, 1, 6, 6], ["b", None, 2, 1, 1], [None, None, 2, 2, 2], ["a", None, 2, 3, 3]]
    settings = {"column_settings": {'["name","A"]': {"pivot_table.column_sort_order": "descending"}},
                "pivot.condense_duplicate_totals": False}
    # Both breakouts as rows: groups of one child get their totals row when totals are not condensed.
    lines, _ = grid(Split([0, 1], [], [2]), settings, rows + [[None, None, 3, 6, 6]])
    assert lines[0] == ["A", "B", "M one"]
    assert [line[0] for line in lines[1:]] == ["b", "Totals for b", "a", "Totals for a", None, "Totals for ",
                                               "Grand totals"]
    assert lines[1:3] == [["b", "x", 1], ["Totals for b", None, 1]]
    assert lines[-1] == ["Grand totals", None, 6]
