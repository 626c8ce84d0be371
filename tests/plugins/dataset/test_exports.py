"""POST /api/dataset/:export-format: every row (no 2,000 cap), Metabase's headers, streamed bodies,
xlsx that openpyxl reads back with typed cells, and the exporters on their own."""
from __future__ import annotations

import csv
import datetime as dt
import decimal
import io
import json
import re

import openpyxl

from core.export import csv as csv_export
from core.export import json as json_export
from core.export import xlsx as xlsx_export


def query(orders, inner=None):
    return {"database": orders.database_id, "type": "query",
            "query": {"source-table": orders.table_id, **(inner or {})}}


def test_csv_export_streams_every_row(admin, orders):
    response = admin.post("/api/dataset/csv", json={"query": query(orders)}, buffered=False)
    assert response.status_code == 200
    assert response.is_streamed
    assert response.headers["Content-Type"].startswith("text/csv")
    assert re.match(r'attachment; filename="query_result_\d{4}-\d\d-\d\dT[\d:.]+Z\.csv"',
                    response.headers["Content-Disposition"])
    assert response.headers["Cache-Control"].startswith("max-age=0")
    assert response.headers["X-Accel-Buffering"] == "no"
    rows = list(csv.reader(io.StringIO(response.get_data(as_text=True))))
    assert rows[0] == ["ID", "Category", "Price", "Created At"]
    assert len(rows) == 1 + orders.count
    # SQLite keeps the datetime as text; it is written as ISO-8601 like the other engines' values.
    assert rows[1] == ["1", "Gizmo", "1.25", "2024-01-01T07:00:00"]


def test_form_encoded_export(admin, orders):
    response = admin.post("/api/dataset/csv", data={"query": json.dumps(query(orders, {"limit": 3})),
                                                    "visualization_settings": "{}", "format_rows": "false"})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert len(response.get_data(as_text=True).strip().split("\n")) == 4


def test_json_export(admin, orders):
    response = admin.post("/api/dataset/json", json={"query": query(orders, {"limit": 2})})
    assert response.headers["Content-Type"] == "application/json; charset=utf-8"
    assert response.json == [{"ID": 1, "Category": "Gizmo", "Price": 1.25, "Created At": "2024-01-01T07:00:00"},
                             {"ID": 2, "Category": "Gadget", "Price": 2.5, "Created At": "2024-01-01T14:00:00"}]
    formatted = admin.post("/api/dataset/csv", json={"query": query(orders, {"limit": 1}), "format_rows": True})
    assert formatted.get_data(as_text=True).splitlines()[1] == '1,Gizmo,1.25,"January 1, 2024, 7:00 AM"'


def test_xlsx_export_reads_back(admin, orders):
    response = admin.post("/api/dataset/xlsx", json={"query": query(orders)})
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    book = openpyxl.load_workbook(io.BytesIO(response.data), read_only=True)
    sheet = book["Query result"]
    rows = list(sheet.iter_rows(values_only=True))
    assert rows[0] == ("ID", "Category", "Price", "Created At")
    assert len(rows) == 1 + orders.count
    assert rows[1] == (1, "Gizmo", 1.25, dt.datetime(2024, 1, 1, 7, 0))  # SQLite's text dates become dates


def test_api_export_format(admin, orders):
    response = admin.post("/api/dataset/api", json={"query": query(orders)})
    assert response.status_code == 200
    body = response.json
    assert body["status"] == "completed" and body["row_count"] == orders.count
    assert len(body["data"]["rows"]) == orders.count and body["data"]["cols"][0]["name"] == "id"


def test_failed_export_and_bad_format(admin, orders):
    response = admin.post("/api/dataset/csv", json={"query": {"database": orders.database_id, "type": "native",
                                                              "native": {"query": "SELECT nope"}}})
    assert response.status_code == 400 and response.json["status"] == "failed"
    assert admin.post("/api/dataset/docx", json={"query": query(orders)}).status_code == 400
    assert admin.post("/api/dataset/csv", data={"query": "{not json"}).status_code == 400


COLUMNS = [{"name": "id", "display_name": "ID"}, {"name": "name", "display_name": "Name"},
           {"name": "amount", "display_name": "Amount"}, {"name": "at", "display_name": "At"},
           {"name": "day", "display_name": "Day"}, {"name": "ok", "display_name": "OK"}]
ROWS = [(1, 'Tom & "Jerry" <x>', decimal.Decimal("1234.5"), dt.datetime(2024, 1, 5, 13, 45), dt.date(2024, 1, 5), True),
        (2, None, 2.0, dt.datetime(2024, 1, 6), None, False)]


def test_csv_writer_values():
    text = b"".join(csv_export.write(COLUMNS, iter(ROWS), {})).decode()
    assert text.splitlines() == ["ID,Name,Amount,At,Day,OK",
                                 '1,"Tom & ""Jerry"" <x>",1234.5,2024-01-05T13:45:00,2024-01-05,true',
                                 "2,,2.0,2024-01-06,,false"]
    formatted = b"".join(csv_export.write(COLUMNS, iter(ROWS), {"format_rows": True, "csv_include_bom": True})).decode()
    assert formatted.startswith("\ufeffID,")
    assert '"1,234.5","January 5, 2024, 1:45 PM","January 5, 2024",true' in formatted


def test_json_writer_values():
    data = json.loads(b"".join(json_export.write(COLUMNS, iter(ROWS), {})))
    assert data[0] == {"ID": 1, "Name": 'Tom & "Jerry" <x>', "Amount": 1234.5, "At": "2024-01-05T13:45:00",
                       "Day": "2024-01-05", "OK": True}


def test_xlsx_writer_typed_cells():
    data = b"".join(xlsx_export.write(COLUMNS, iter(ROWS + [(3, "bad\x01char", float("nan"), None, None, None)])))
    book = openpyxl.load_workbook(io.BytesIO(data))
    sheet = book["Query result"]
    rows = list(sheet.iter_rows(values_only=True))
    assert rows[0] == ("ID", "Name", "Amount", "At", "Day", "OK")
    assert rows[1] == (1, 'Tom & "Jerry" <x>', 1234.5, dt.datetime(2024, 1, 5, 13, 45), dt.datetime(2024, 1, 5), True)
    assert rows[2] == (2, None, 2.0, dt.datetime(2024, 1, 6), None, False)
    assert rows[3][:3] == (3, "badchar", "nan")
    assert sheet.cell(2, 4).number_format == "yyyy-mm-dd hh:mm:ss"
    assert sheet.cell(2, 5).number_format == "yyyy-mm-dd"


def test_writers_yield_chunks_as_rows_stream():
    """A big input comes out in many chunks, and the writer pulls rows lazily (flat memory)."""
    pulled = []

    def rows():
        for i in range(20000):
            pulled.append(i)
            yield (i, f"name {i}", i * 1.5, None, None, None)

    for writer in (csv_export.write, json_export.write, xlsx_export.write):
        pulled.clear()
        chunks = writer(COLUMNS, rows(), {})
        first = next(chunks)
        assert first and len(pulled) < 20000
        assert sum(1 for _ in chunks) >= 2
        assert len(pulled) == 20000


def test_titles_from_visualization_settings():
    from core.export.formatting import titles

    viz = {"column_settings": {'["name","amount"]': {"column_title": "Money"},
                               '["name","name"]': {"number_style": "currency", "currency": "EUR"}}}
    assert titles(COLUMNS, viz, format_rows=True)[:3] == ["ID", "Name (€)", "Money"]
    assert titles(COLUMNS, viz, format_rows=False)[:3] == ["ID", "Name", "Amount"]
    text = b"".join(csv_export.write(COLUMNS, iter(ROWS), {"format_rows": True, "visualization_settings": viz})).decode()
    assert text.startswith("ID,Name (€),Money,At,Day,OK")


def test_text_datetimes_written_as_iso():
    cols = [{"name": "at", "display_name": "At", "base_type": "type/DateTime"},
            {"name": "note", "display_name": "Note", "base_type": "type/Text"}]
    rows = [("2024-03-01 00:00:00", "a b"), ("2024-03-01 13:45:10", "c d")]
    text = b"".join(csv_export.write(cols, iter(rows), {})).decode()
    assert text.splitlines() == ["At,Note", "2024-03-01,a b", "2024-03-01T13:45:10,c d"]
    data = json.loads(b"".join(json_export.write(cols, iter(rows), {})))
    assert [d["At"] for d in data] == ["2024-03-01", "2024-03-01T13:45:10"]


def test_formatted_breakouts_follow_their_unit(admin, orders):
    """format_rows writes a bucketed datetime as its unit reads (a year as "2024"), as Metabase does."""
    field = ["field", orders.fields["created_at"], None]

    def first_label(unit: str, viz: dict | None = None) -> str:
        bucketed = ["field", orders.fields["created_at"], {"temporal-unit": unit}]
        body = {"query": query(orders, {"breakout": [bucketed], "aggregation": [["count"]]}), "format_rows": True,
                "visualization_settings": viz or {}}
        return list(csv.reader(io.StringIO(admin.post("/api/dataset/csv", json=body).get_data(as_text=True))))[1][0]

    assert first_label("year") == "2024"
    assert first_label("quarter") == "Q1 - 2024"
    assert first_label("month") == "January, 2024"
    assert first_label("week") == "December 31, 2023 - January 6, 2024"  # weeks start on Sunday by default
    assert first_label("day") == "Monday, January 1, 2024"
    assert first_label("hour") == "January 1, 2024, 7 AM"
    abbreviated = {"column_settings": {'["name","created_at"]': {"date_abbreviate": True}}}
    assert first_label("month", abbreviated) == "Jan, 2024"
    styled = {"column_settings": {'["name","created_at"]': {"date_style": "D/M/YYYY", "date_separator": "-",
                                                           "time_style": "HH:mm"}}}
    plain = {"query": query(orders, {"fields": [field], "limit": 1}), "format_rows": True,
             "visualization_settings": styled}
    assert admin.post("/api/dataset/csv", json=plain).get_data(as_text=True).splitlines()[1] == '"1-1-2024, 07:00"'
