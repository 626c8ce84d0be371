"""The JSON and XLSX writers work a column of a batch at a time; what they write is, value for value,
what the cell-by-cell rules write: orjson of each row's formatter values (JSON) and core.export
.sheet_rows._cell of each value, SQLite datetime text parsed (XLSX). Checked over awkward and
generated columns, through the writers themselves."""
from __future__ import annotations

import datetime as dt
import decimal
import io
import uuid
import zipfile
import zoneinfo

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from core.export import json as json_export
from core.export import xlsx
from core.export.formatting import formatter, titles
from core.export.sheet_rows import _cell, _parse_dates

COLUMNS = [{"name": n, "display_name": n.title(), "base_type": t} for n, t in (
    ("id", "type/Integer"), ("label", "type/Text"), ("price", "type/Float"), ("at", "type/DateTime"),
    ("day", "type/Date"), ("anything", "type/*"), ("flag", "type/Boolean"))]
TEMPORAL = [c["base_type"] in ("type/DateTime", "type/Date") for c in COLUMNS]

LABELS = ["plain", "a & b", "<tag>", "ctrl\x01char", "", None, "ünï ✓", "100%", "%s %d", "x" * 50]
PRICES = [1.5, 0.1 + 0.2, float("nan"), float("inf"), -0.0, 1e16, None, 2, 5e-324]
ATS = ["2024-01-05 13:45:00", "2024-01-05 00:00:00", "2024-02-30 10:00:00", "2024-01-05 24:00:00",
       "2024-01-05T13:45:00", "2024-01-05", "2024-01-05 13:45:00.250", None, "not a date", 12,
       dt.datetime(2024, 1, 5, 13, 45, 1, 500), dt.datetime(2024, 1, 5), dt.date(2024, 1, 6),
       dt.datetime(2024, 1, 5, 3, tzinfo=zoneinfo.ZoneInfo("Asia/Kolkata")),
       dt.datetime(2024, 1, 5, 3, tzinfo=dt.timezone(dt.timedelta(hours=1, seconds=7))), "2024-01-05 1:45:00  "]
DAYS = [dt.date(2024, 1, 5), dt.date(1, 1, 1), "2024-01-05", None, dt.datetime(2024, 1, 5, 12)]
ANYTHING = [decimal.Decimal("12.50"), decimal.Decimal("3"), b"bytes,\xff", uuid.UUID(int=7), dt.time(13, 45),
            dt.time(1, 2, 3, 4, tzinfo=dt.timezone.utc), True, None, [1, 2], {"a": 1}, dt.timedelta(days=2), 2**62]


def awkward_rows(count: int) -> list[tuple]:
    rows = []
    for i in range(count):
        if i < 2000 or i % 7:  # the first batch is clean, later ones mix
            rows.append((i, f"item {i}", i * 0.25, f"2024-0{i % 9 + 1}-1{i % 9} {i % 24:02d}:{i % 60:02d}:0{i % 10}",
                         dt.date(2024, 1, 1) + dt.timedelta(days=i % 400), i * 3, i % 2 == 0))
        else:
            k = i // 7
            rows.append((i, LABELS[k % len(LABELS)], PRICES[k % len(PRICES)], ATS[k % len(ATS)],
                         DAYS[k % len(DAYS)], ANYTHING[k % len(ANYTHING)], [True, False, None][k % 3]))
    return rows


def cell_by_cell_json(rows: list[tuple], format_rows: bool = False) -> bytes:
    keys = titles(COLUMNS, None, format_rows)
    formatters = [formatter(c, None, format_rows) for c in COLUMNS]
    return b"[" + b",".join(orjson.dumps({k: json_export.exact(f(v)) for k, f, v in zip(keys, formatters, row)},
                                         option=orjson.OPT_NON_STR_KEYS, default=str) for row in rows) + b"]"


def sheet(data: bytes) -> str:
    with zipfile.ZipFile(io.BytesIO(data)) as book:
        return book.read("xl/worksheets/sheet1.xml").decode()


def cell_by_cell_rows(rows: list[tuple]) -> str:
    indexes = [i for i, t in enumerate(TEMPORAL) if t]
    return "".join("<row>" + "".join(_cell(v) for v in _parse_dates(row, indexes)) + "</row>" for row in rows)


def test_json_batches_equal_cell_by_cell():
    rows = awkward_rows(9000)
    for format_rows in (False, True):
        written = b"".join(json_export.write(COLUMNS, rows, {"format_rows": format_rows}))
        assert written == cell_by_cell_json(rows, format_rows)
    assert b"".join(json_export.write(COLUMNS, [], {})) == b"[]"
    # At midnight a datetime is written as its date.
    assert orjson.loads(b"".join(json_export.write(COLUMNS, rows[:3], {})))[0]["At"] == "2024-01-10"


def test_an_integral_decimal_wider_than_64_bits_is_written_as_its_digits():
    # hypothesis found Decimal('-18248154139043561472.000') failing the JSON download (orjson's integers are 64-bit)
    wide = decimal.Decimal("-18248154139043561472.000")
    rows = [(1, "a", 1.5, None, None, wide, True), (2, "b", 2.5, None, None, decimal.Decimal("12.000"), False)]
    written = orjson.loads(b"".join(json_export.write(COLUMNS, rows, {})))
    values = [row[COLUMNS[5]["display_name"]] for row in written]
    assert values == [int(wide), 12] and b"-18248154139043561472," in b"".join(json_export.write(COLUMNS, rows, {}))
    assert b"".join(json_export.write(COLUMNS, rows, {})) == cell_by_cell_json(rows)


def test_xlsx_rows_equal_cell_by_cell():
    rows = awkward_rows(9000)
    body = sheet(b"".join(xlsx.write(COLUMNS, rows)))
    assert cell_by_cell_rows(rows) in body


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(
    st.integers(-2**63, 2**63 - 1),
    st.one_of(st.text(max_size=12), st.none()),
    st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.none(), st.integers(-5, 5)),
    st.one_of(st.datetimes(min_value=dt.datetime(1900, 1, 1)).map(lambda d: d.replace(microsecond=0).isoformat(" ")),
              st.datetimes(min_value=dt.datetime(1900, 1, 1)), st.none(), st.text(max_size=20)),
    st.one_of(st.dates(min_value=dt.date(1900, 1, 1)), st.none()),
    st.one_of(st.decimals(allow_nan=False, allow_infinity=False, places=3), st.text(max_size=5), st.booleans()),
    st.one_of(st.booleans(), st.none())), min_size=1, max_size=60))
def test_generated_columns(rows):
    assert sheet(b"".join(xlsx.write(COLUMNS, rows))).count(cell_by_cell_rows(rows)) == 1
    assert b"".join(json_export.write(COLUMNS, rows, {})) == cell_by_cell_json(rows)


def test_json_repeated_titles_keep_the_last_column():
    columns = [{"name": "a", "display_name": "Same", "base_type": "type/DateTime"},
               {"name": "b", "display_name": "Same", "base_type": "type/Text"},
               {"name": "c", "display_name": "Other", "base_type": "type/Decimal"}]
    rows = [("2024-01-05 00:00:00", f"text {i}", decimal.Decimal(i) / 4) for i in range(2500)]
    keys = titles(columns)
    formatters = [formatter(c, None, False) for c in columns]
    expected = b"[" + b",".join(orjson.dumps({k: f(v) for k, f, v in zip(keys, formatters, row)})
                                for row in rows) + b"]"
    written = b"".join(json_export.write(columns, rows, {}))
    assert written == expected
    assert orjson.loads(written)[1] == {"Same": "text 1", "Other": 0.25}


def test_xlsx_text_dates_and_datetimes():
    columns = [{"name": "d", "display_name": "D", "base_type": "type/Date"},
               {"name": "t", "display_name": "T", "base_type": "type/DateTime"}]
    clean = [(f"2024-0{i % 9 + 1}-1{i % 10}", f"2023-12-0{i % 9 + 1} 0{i % 10}:1{i % 10}:5{i % 10}")
             for i in range(2000)]
    odd = [("2024-02-30", "2024-01-05 24:00:00"), ("2024-1-05", "2024-01-05 13:45"), (None, None),
           ("2024-01-05 ", "2024-01-05 00:00:00"), ("0001-01-01", "9999-12-31 23:59:59")] * 400
    rows = clean + odd + clean
    indexes = [0, 1]
    expected = "".join("<row>" + "".join(_cell(v) for v in _parse_dates(row, indexes)) + "</row>" for row in rows)
    body = sheet(b"".join(xlsx.write(columns, rows)))
    assert expected in body
    assert '<c s="1"><v>45301</v></c>' in body  # 2024-01-10's day number, from text
