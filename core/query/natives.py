"""Native stages inside a compiled MBQL query: the placeholder table the compiler selects from, and
splicing each native stage's SQL into the rendered query in its place (native cards and persisted
models used as sources).
"""
from __future__ import annotations

from sqlglot import exp

from core.http.errors import Invalid

from . import native as N
from .model import Stage
from .refs import Col

PLACEHOLDER = "__tessera_native_source_{}__"


def native_source(context, stage: Stage):
    """The tree and columns of a native first stage inside a compiled query: a placeholder table the
    processor replaces by the stage's SQL, and the columns the stage's metadata names."""
    if not stage.source_metadata:
        raise Invalid("Invalid query: the columns of the native source are unknown; save the card again.")
    natives = context.natives
    marker = PLACEHOLDER.format(len(natives))
    natives[marker] = stage.native
    tree = exp.select(exp.Star()).from_(exp.to_identifier(marker, quoted=True))
    cols = []
    for column in stage.source_metadata:
        name = column.get("name")
        if not isinstance(name, str):
            continue
        base = column.get("base_type") or "type/*"
        meta = {"name": name, "display_name": column.get("display_name") or name, "base_type": base,
                "effective_type": column.get("effective_type") or base,
                "semantic_type": column.get("semantic_type"), "source": "fields",
                "field_ref": ["field", name, {"base-type": base}]}
        field_id = column.get("id") if isinstance(column.get("id"), int) else None
        cols.append(Col(alias=name, sql=exp.column(name, quoted=True), meta=meta, field_id=field_id))
    return tree, cols


def splice(base, natives: dict, driver, render_native):
    """`base` (the compiled SQL as core.query.native.NativeSQL) with each native placeholder replaced
    by that stage's SQL (tags substituted by `render_native(native_stage) -> NativeSQL`)."""
    out = base
    for marker, stage in natives.items():
        rendered = driver.to_sql(_placeholder_select(marker))
        inner = render_native(stage)
        pieces: list = []
        for piece in out.pieces:
            if not isinstance(piece, str) or rendered not in piece:
                pieces.append(piece)
                continue
            before, after = piece.split(rendered, 1)
            pieces.extend([before, *_strip(inner).pieces, after])
        out = N.NativeSQL(pieces)
    return out


def _placeholder_select(marker: str):
    return exp.select(exp.Star()).from_(exp.to_identifier(marker, quoted=True))


def _strip(sql):
    pieces = list(sql.pieces)
    while pieces and isinstance(pieces[-1], str) and not pieces[-1].strip().rstrip(";").strip():
        pieces.pop()
    if pieces and isinstance(pieces[-1], str):
        pieces[-1] = pieces[-1].rstrip().rstrip(";")
    return N.NativeSQL(pieces)
