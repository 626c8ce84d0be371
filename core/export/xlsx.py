"""XLSX download: a streaming SpreadsheetML writer over zipfile, one sheet named "Query result".

openpyxl's write-only mode builds every cell as an object and wrote well under 33,000 rows/s, far
from the 150,000 the export must reach (bench/bench_export.py), so the sheet XML is written here
directly: numbers as numbers, booleans as booleans, text as inline strings (no shared-string table to
hold in memory), dates and datetimes as Excel serial numbers with a date style, as Metabase's xlsx
export does (format_rows is ignored). The rows' XML is made a column of a batch at a time
(core.export.sheet_rows). The zip is written to a sink that hands its bytes out after every batch of
rows, so memory stays flat; entries use data descriptors, which every reader (openpyxl included) accepts.
"""
from __future__ import annotations

import datetime as dt
import zipfile
from typing import Any, Iterable, Iterator

from . import batched, sheet_rows
from .formatting import titles
from .sheet_rows import TEMPORAL_TYPES, _cell, _parse_dates

SHEET_NAME = "Query result"

CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    '<Override PartName="/xl/styles.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>'
    '<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>'
    '<Override PartName="/docProps/app.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.extended-properties+xml"/>'
    '</Types>'
)
ROOT_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
    'Target="xl/workbook.xml"/>'
    '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" '
    'Target="docProps/core.xml"/>'
    '<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties" '
    'Target="docProps/app.xml"/>'
    '</Relationships>'
)
WORKBOOK = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    f'<sheets><sheet name="{SHEET_NAME}" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
WORKBOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" '
    'Target="worksheets/sheet1.xml"/>'
    '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" '
    'Target="styles.xml"/>'
    '</Relationships>'
)
# Style 0: general; 1: date (yyyy-mm-dd); 2: datetime; 3: time; 4: bold header.
STYLES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
    '<numFmts count="3"><numFmt numFmtId="164" formatCode="yyyy-mm-dd"/>'
    '<numFmt numFmtId="165" formatCode="yyyy-mm-dd hh:mm:ss"/><numFmt numFmtId="166" formatCode="hh:mm:ss"/></numFmts>'
    '<fonts count="2"><font><sz val="11"/><name val="Calibri"/></font><font><b/><sz val="11"/><name val="Calibri"/></font></fonts>'
    '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>'
    '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
    '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
    '<cellXfs count="5"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
    '<xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>'
    '<xf numFmtId="165" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>'
    '<xf numFmtId="166" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>'
    '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/></cellXfs>'
    '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
    '</styleSheet>'
)
APP = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">'
    '<Application>Tessera</Application></Properties>'
)
SHEET_START = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
)
SHEET_END = "</sheetData></worksheet>"


def _core_xml() -> str:
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
        '<dc:creator>Tessera</dc:creator>'
        f'<dcterms:created xsi:type="dcterms:W3CDTF">{now}</dcterms:created>'
        f'<dcterms:modified xsi:type="dcterms:W3CDTF">{now}</dcterms:modified>'
        '</cp:coreProperties>'
    )


class _Sink:
    """A write-only file for zipfile whose bytes are taken out after each batch."""

    def __init__(self):
        self.parts: list[bytes] = []

    def write(self, data) -> int:
        self.parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def take(self) -> bytes:
        data = b"".join(self.parts)
        self.parts.clear()
        return data


def _book(parts: Iterator[str]) -> Iterator[bytes]:
    """The workbook around one sheet whose rows' XML comes in `parts` (each part one batch)."""
    sink = _Sink()
    # compresslevel 1: the sheet XML is very repetitive, so it still shrinks ~10x, at a fraction of
    # the time level 6 takes.
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for name, body in (("[Content_Types].xml", CONTENT_TYPES), ("_rels/.rels", ROOT_RELS),
                           ("docProps/app.xml", APP), ("docProps/core.xml", _core_xml()),
                           ("xl/workbook.xml", WORKBOOK), ("xl/_rels/workbook.xml.rels", WORKBOOK_RELS),
                           ("xl/styles.xml", STYLES)):
            archive.writestr(name, body)
        yield sink.take()
        with archive.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as sheet:
            sheet.write(SHEET_START.encode("utf-8"))
            for part in parts:
                sheet.write(part.encode("utf-8"))
                data = sink.take()
                if data:
                    yield data
            sheet.write(SHEET_END.encode("utf-8"))
    yield sink.take()


def _bold(value: Any) -> str:
    cell = _cell(value)
    # Typed dates keep their number format rather than the bold style.
    return cell if value is None or cell.startswith('<c s="') else cell.replace("<c", '<c s="4"', 1)


def _bold_row(values: Iterable[Any]) -> str:
    return "<row>" + "".join(_bold(v) for v in values) + "</row>"


def write(columns: list[dict], rows: Iterable[tuple], options: dict | None = None) -> Iterator[bytes]:
    options = options or {}

    def parts() -> Iterator[str]:
        yield _bold_row(titles(columns, options.get("visualization_settings"), False))
        # Engines that store dates as text (SQLite) still give real Excel dates in temporal columns.
        temporal = [(c.get("effective_type") or c.get("base_type")) in TEMPORAL_TYPES for c in columns]
        rows_xml = sheet_rows.BatchWriter(len(columns), temporal)
        for batch in batched(rows):
            yield rows_xml(batch) if columns else "<row></row>" * len(batch)

    return _book(parts())


def write_pivot(table, options: dict | None = None) -> Iterator[bytes]:
    """A core.export.pivot.PivotTable as a flat sheet, as Metabase 0.57 writes it (not a native Excel
    pivot table): header rows bold, row and column labels as the csv writes them (format_rows
    honoured), measure cells typed (numbers, Excel dates)."""
    from .formatting import formatter

    options = options or {}
    viz, format_rows = options.get("visualization_settings"), bool(options.get("format_rows"))

    def value(column: dict):
        if (column.get("effective_type") or column.get("base_type")) in TEMPORAL_TYPES:
            return lambda v: _parse_dates((v,), [0])[0]
        return lambda v: v

    lines, header_count = table.grid(lambda column: formatter(column, viz, format_rows), value)

    def parts() -> Iterator[str]:
        for line in lines[:header_count]:
            yield _bold_row(line)
        for start in range(header_count, len(lines), 2000):
            yield "".join("<row>" + "".join(_cell(v) for v in line) + "</row>"
                          for line in lines[start:start + 2000])

    return _book(parts())
