"""Reading an uploaded CSV: dialect, header, and a type per column (integer, float, boolean, date,
datetime, text) decided from every value, as Metabase's uploads do. Everything is read and checked
before anything is written, so a bad file changes nothing."""
from __future__ import annotations

import csv
import datetime as dt
import io
import re
from dataclasses import dataclass

from core.http.errors import Invalid

MAX_BYTES = 200 * 1024 * 1024
ROW_ID = "_mb_row_id"
BOOLEANS = {"true": True, "false": False, "yes": True, "no": False}
# Narrowest first; a column takes the first type every non-empty value fits.
TYPE_ORDER = ("type/Boolean", "type/BigInteger", "type/Float", "type/Date", "type/DateTime", "type/Text")
_INT = re.compile(r"^[+-]?\d{1,18}$")
_FLOAT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


@dataclass
class Parsed:
    names: list[str]
    display_names: list[str]
    types: list[str]
    rows: list[tuple]


def _clean_name(raw: str, index: int) -> str:
    name = re.sub(r"[^a-z0-9]+", "_", raw.strip().lower()).strip("_")
    return (name or f"column_{index + 1}")[:60]


def _fits(kind: str, value: str) -> bool:
    if kind == "type/Boolean":
        return value.lower() in BOOLEANS
    if kind == "type/BigInteger":
        return bool(_INT.match(value))
    if kind == "type/Float":
        return bool(_FLOAT.match(value))
    if kind == "type/Date":
        try:
            dt.date.fromisoformat(value)
            return len(value) == 10
        except ValueError:
            return False
    if kind == "type/DateTime":
        try:
            dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
            return True
        except ValueError:
            return False
    return True


def _convert(kind: str, value: str):
    if value == "":
        return None
    if kind == "type/Boolean":
        return BOOLEANS[value.lower()]
    if kind == "type/BigInteger":
        return int(value)
    if kind == "type/Float":
        return float(value)
    if kind == "type/Date":
        return dt.date.fromisoformat(value)
    if kind == "type/DateTime":
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        return moment.astimezone(dt.timezone.utc).replace(tzinfo=None) if moment.tzinfo else moment
    return value


def parse(data: bytes) -> Parsed:
    if not data.strip():
        raise Invalid("The CSV file is empty.")
    if len(data) > MAX_BYTES:
        raise Invalid("The CSV file is larger than 200 MB.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise Invalid("The CSV file is not UTF-8 text.") from None
    if "\x00" in text:
        raise Invalid("The file is not a CSV file.")
    sample = text[:64 * 1024]
    try:
        dialect = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    try:
        records = list(csv.reader(io.StringIO(text), dialect))
    except csv.Error as exc:
        raise Invalid(f"The CSV file cannot be read: {exc}.") from None
    records = [r for r in records if any(cell.strip() for cell in r)]
    if not records:
        raise Invalid("The CSV file has no header row.")
    header = [cell.strip() for cell in records[0]]
    if not any(header):
        raise Invalid("The CSV file's header row is empty.")
    names: list[str] = []
    for index, raw in enumerate(header):
        base = _clean_name(raw, index)
        if base == ROW_ID:
            base = f"{base}_1"
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base}_{n}"
        names.append(name)
    width = len(names)
    body = records[1:]
    for number, record in enumerate(body, start=2):
        if len(record) > width:
            raise Invalid(f"Row {number} of the CSV file has {len(record)} values but the header has {width} columns.")
    cells = [[(record[i].strip() if i < len(record) else "") for i in range(width)] for record in body]
    types = []
    for i in range(width):
        values = [row[i] for row in cells if row[i] != ""]
        types.append(next(k for k in TYPE_ORDER if all(_fits(k, v) for v in values)) if values else "type/Text")
    rows = [tuple(_convert(types[i], row[i]) for i in range(width)) for row in cells]
    return Parsed(names, [h or n for h, n in zip(header, names)], types, rows)
