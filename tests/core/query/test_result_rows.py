"""Rows encoded column by column (core.query.results.encode_rows) are the bytes the per-cell path wrote:
json_rows for every cell, SQLite's text datetimes made ISO-8601, the body encoder for the rest."""
from __future__ import annotations

import datetime as dt
import decimal
import uuid

import pytest

from core.http.api import dumps
from core.query import results as R

UTC = dt.timezone.utc
PLUS_2 = dt.timezone(dt.timedelta(hours=2))


def per_cell(cols, rows, js_int_to_string=True) -> bytes:
    """What the response carried before: every cell through json_value, then every text value of a
    temporal column with a space at index 10 (and at least 19 characters) given a "T" there."""
    out = R.json_rows(rows, js_int_to_string)
    temporal = [i for i, c in enumerate(cols) if c["base_type"] in R.TEMPORAL_TYPES]
    for row in out:
        for i in temporal:
            value = row[i]
            if type(value) is str and len(value) >= 19 and value[10] == " ":
                row[i] = value[:10] + "T" + value[11:]
    return dumps(out)


def col(base: str) -> dict:
    return {"name": base, "base_type": base}


COLUMNS = {
    "ints": (col("type/Integer"), [1, -5, 0, None, 2**53 - 1, True]),
    "floats": (col("type/Float"), [1.5, float("nan"), float("inf"), -0.0, 1e300, None]),
    "text": (col("type/Text"), ["a", "", "é\u2028\"\\", "2024-01-05 13:45:00", None, "x" * 30]),
    "text datetimes": (col("type/DateTime"), ["2024-01-05 13:45:00", "2024-01-05 13:45:00.123", None, "2024-01-05",
                                              "not a date at all here", "2024-01-05T13:45:00"]),
    "mixed sqlite datetimes": (col("type/DateTime"), [1704462300, "2024-01-05 13:45:00", 1.5, None, b"x", "a b"]),
    "aware datetimes": (col("type/DateTimeWithLocalTZ"), [dt.datetime(2024, 1, 5, 13, 45, tzinfo=UTC),
                                                          dt.datetime(2024, 1, 5, 13, 45, 1, 5, tzinfo=PLUS_2), None,
                                                          dt.datetime(1, 1, 1, tzinfo=UTC), None, None]),
    "naive datetimes": (col("type/DateTime"), [dt.datetime(2024, 1, 5), dt.datetime(999, 12, 31, 23, 59, 59, 999999),
                                               None, None, None, None]),
    "dates": (col("type/Date"), [dt.date(2024, 2, 29), None, dt.date(1, 1, 1), None, None, None]),
    "times": (col("type/Time"), [dt.time(13, 45), dt.time(0, 0, 0, 1), dt.time(1, 2, tzinfo=UTC), None, None, None]),
    "decimals": (col("type/Decimal"), [decimal.Decimal("1.50"), decimal.Decimal("3"), None,
                                       decimal.Decimal("-0.001"), None, None]),
    "bytes": (col("type/*"), [b"abc", bytearray(b"\xff"), memoryview(b"z"), None, None, None]),
    "uuids": (col("type/UUID"), [uuid.UUID(int=1), None, None, None, None, None]),
    "json": (col("type/JSON"), [{"a": [1, 2.5, None], "b": dt.datetime(2024, 1, 1, tzinfo=UTC)}, [1, "x"], None,
                                {"n": 2**60}, None, None]),
    "nulls": (col("type/*"), [None] * 6),
}


@pytest.mark.parametrize("name", sorted(COLUMNS))
@pytest.mark.parametrize("js_int_to_string", [True, False])
def test_each_kind_of_column_encodes_as_the_per_cell_path(name, js_int_to_string):
    column, values = COLUMNS[name]
    rows = [(i, value) for i, value in enumerate(values)]
    cols = [col("type/Integer"), column]
    assert R.encode_rows(cols, rows, js_int_to_string) == per_cell(cols, rows, js_int_to_string)


@pytest.mark.parametrize("js_int_to_string", [True, False])
def test_all_columns_together_and_big_integers(js_int_to_string):
    names = sorted(COLUMNS)
    cols = [COLUMNS[n][0] for n in names]
    rows = [tuple(COLUMNS[n][1][i] for n in names) for i in range(6)]
    assert R.encode_rows(cols, rows, js_int_to_string) == per_cell(cols, rows, js_int_to_string)
    big = rows + [tuple(2**53 if n == "ints" else None for n in names), tuple(-(2**70) if n == "ints" else None
                                                                              for n in names)]
    encoded = R.encode_rows(cols, big, js_int_to_string)
    assert encoded == per_cell(cols, big, js_int_to_string)
    assert (b'"9007199254740992"' in encoded) is js_int_to_string


def test_no_rows():
    assert R.encode_rows([col("type/Text")], []) == b"[]"
