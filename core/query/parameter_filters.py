"""Parameters of an MBQL query applied to its stages: a field parameter with a value becomes a filter
on the stage it names, a "temporal-unit" parameter re-buckets the breakouts on its field. (Native
queries take their parameters through their template tags, core.query.native.)
"""
from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy.orm import Session

from core.appdb.models import Field
from core.http.errors import Invalid

from . import parameters as P
from .errors import QueryFailed
from .result import error_message


def apply_mbql_parameters(session: Session, query, now: dt.datetime, start: int) -> None:
    """Each field parameter with a value becomes a filter on the stage it names (stage-number),
    by default the last stage."""
    from .mbql import normalize

    for param in query.parameters or ():
        target = param.get("target")
        ref = P.field_target(target)
        if ref is None or P.template_tag_target(target) is not None:
            continue
        if param.get("type") == "temporal-unit":
            _apply_temporal_unit(query, ref, param.get("value"))
            continue
        flt = P.read_filter(param.get("type") or "category", param.get("value"), base_type=_base_type(session, ref),
                            options=param.get("options"), now=now, week_start=start)
        if flt is None:
            continue
        stage_number = target[2].get("stage-number") if len(target) > 2 and isinstance(target[2], dict) else None
        try:
            stage = query.stages[stage_number if isinstance(stage_number, int) else -1]
        except IndexError:
            raise QueryFailed(f"Invalid stage-number {stage_number}", "invalid-parameter") from None
        if stage.native is not None:
            raise QueryFailed("A field parameter cannot filter a native stage; use a field filter tag.",
                              "invalid-parameter")
        # Read the clause with the same normaliser as the query's own filters.
        try:
            holder = normalize({"database": query.database, "type": "query",
                                "query": {"source-table": 1, "filter": P.to_mbql(flt, ref)}})
        except Invalid as exc:
            raise QueryFailed(error_message(exc), "invalid-parameter") from None
        stage.filters.extend(holder.stages[-1].filters)


def _apply_temporal_unit(query, ref: list, unit: Any) -> None:
    """A "temporal-unit" parameter re-buckets the breakouts on its field (Metabase's time grouping)."""
    from .model import TEMPORAL_UNITS

    if P.is_empty(unit):
        return
    if isinstance(unit, list):
        unit = unit[0]
    if unit not in TEMPORAL_UNITS:
        raise QueryFailed(f"Invalid temporal unit: {unit!r}", "invalid-parameter")
    for stage in query.stages:
        for breakout in stage.breakouts:
            if isinstance(breakout, list) and breakout[:2] == ref[:2]:
                opts = dict(breakout[2] or {}) if len(breakout) > 2 else {}
                opts["temporal-unit"] = unit
                breakout[2:] = [opts]


def _base_type(session: Session, ref: list) -> str | None:
    if ref[0] == "field" and isinstance(ref[1], int):
        row = session.get(Field, ref[1])
        return None if row is None else (row.effective_type or row.base_type)
    opts = ref[2] if len(ref) > 2 and isinstance(ref[2], dict) else {}
    return opts.get("base-type")
