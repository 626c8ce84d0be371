"""What the chart tests share: small fixed results, a PNG reader (zlib only: enough to check a picture's
size and that it is not blank), and the golden-SVG harness.

Golden SVGs live in tests/charts/golden/<name>.svg and are compared byte for byte (the renderer is
deterministic). After a deliberate change, regenerate with TESSERA_REGEN_GOLDEN=1, look at the new
pictures and commit them; a missing golden file fails the test rather than passing silently.
"""
from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"


def col(name: str, base: str = "type/Integer", **extra) -> dict:
    return {"name": name, "display_name": extra.pop("display_name", name.replace("_", " ").title()),
            "base_type": base, "effective_type": base, **extra}


def result(cols: list[dict], rows: list[list], row_count: int | None = None) -> dict:
    return {"data": {"cols": cols, "rows": rows}, "row_count": len(rows) if row_count is None else row_count}


MONTH = col("CREATED_AT", "type/DateTime", display_name="Created At", unit="month")
COUNT = col("count", display_name="Count")
MONTHLY = result([MONTH, COUNT], [["2024-01-01T00:00:00", 120], ["2024-02-01T00:00:00", 150],
                                  ["2024-03-01T00:00:00", 90]])


def check_golden(name: str, svg: bytes) -> None:
    path = GOLDEN / f"{name}.svg"
    if os.environ.get("TESSERA_REGEN_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_bytes(svg)
    assert path.exists(), f"no golden file {path.name}: run with TESSERA_REGEN_GOLDEN=1 and review it"
    assert svg == path.read_bytes(), f"{path.name} differs from the rendered SVG (TESSERA_REGEN_GOLDEN=1 to accept)"


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's header, without decoding its pixels."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">II", data[16:24])


def read_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGBA pixels as bytes) of an 8-bit RGBA or RGB PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, chunks, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, colour = header[:4]
    assert depth == 8 and colour in (2, 6), f"unexpected PNG format depth={depth} colour={colour}"
    step = 4 if colour == 6 else 3
    raw = zlib.decompress(b"".join(chunks))
    stride = width * step
    rows, previous, at = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[at], bytearray(raw[at + 1:at + 1 + stride])
        at += 1 + stride
        for i in range(stride):
            left = line[i - step] if i >= step else 0
            up = previous[i]
            corner = previous[i - step] if i >= step else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, rows


def colours(data: bytes) -> set[bytes]:
    """The distinct pixel values of a PNG (RGB, alpha ignored), sampled every fourth pixel of every row."""
    width, height, rows = read_png(data)
    step = len(rows[0]) // width
    return {row[i:i + 3] for row in rows for i in range(0, len(row), step * 4)}
