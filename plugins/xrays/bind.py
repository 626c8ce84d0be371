"""Binding a template to a root: each dimension to the columns its best-scoring definition matches,
then each card to every combination of the columns its dimensions, metrics and filters name. The
result is a list of `Built` cards (query parts kept apart from the root's own filters, so that a
comparison can run the same card on another root). Metadata only: no warehouse query.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from . import types
from .roots import Col, Root
from .templates import CardSpec, Dimension, Template

MAX_COMBINATIONS = 3  # a card repeated for at most this many columns of one dimension


@dataclass(frozen=True)
class Built:
    spec: CardSpec
    title: str
    score: float
    aggregation: list
    breakout: list
    filters: list
    order_by: list
    cols: dict  # dimension name -> Col used


def _matches(dim: Dimension, col: Col, root: Root) -> bool:
    field_type = dim.field_type
    if field_type == "this":
        return root.focus is not None and col.id == root.focus.id and col.via is None and col.name == root.focus.name
    if "." in field_type and not field_type.startswith("type/"):
        entity, field_type = field_type.split(".", 1)
        if col.via is None:
            if dim.linked or entity not in types.entity_chain(root.entity_type):
                return False
        elif entity not in types.entity_chain(col.table_entity):
            return False
    elif col.via is not None:
        return False
    if not types.field_isa(col, field_type):
        return False
    if dim.named and not re.search(dim.named, col.name.lower()):
        return False
    if dim.links_to and (col.links_to is None or dim.links_to not in types.entity_chain(col.links_to)):
        return False
    count = col.distinct_count
    return not (dim.max_cardinality and count is not None and count > dim.max_cardinality)


def bind(template: Template, root: Root) -> dict[str, tuple[list[Col], float]]:
    bound = {}
    for name, definitions in template.dimensions.items():
        for dim in definitions:
            cols = [c for c in root.cols if _matches(dim, c, root)]
            if cols:
                bound[name] = (cols[:MAX_COMBINATIONS], dim.score)
                break
    return bound


def _dimension_names(value) -> set[str]:
    if isinstance(value, list):
        if len(value) == 2 and value[0] == "dimension" and isinstance(value[1], str):
            return {value[1]}
        return set().union(*(_dimension_names(v) for v in value)) if value else set()
    return set()


def _substitute(value, cols: dict[str, Col]):
    if isinstance(value, list):
        if len(value) == 2 and value[0] == "dimension" and isinstance(value[1], str):
            return cols[value[1]].ref()
        return [_substitute(v, cols) for v in value]
    return value


def label(col: Col) -> str:
    return f"{col.table_name} → {col.display_name}" if col.via is not None else col.display_name


def interpolate(text: str, root: Root, cols: dict[str, Col] | None = None) -> str:
    def one(match):
        key = match.group(1).strip()
        if key == "this":
            return root.name
        if key == "table":
            return root.extra.get("table_name", root.name)
        col = (cols or {}).get(key)
        return label(col) if col is not None else key
    out, at = [], 0
    for match in re.finditer(r"\{\{([^}]+)\}\}", text):
        before, value = text[at:match.start()], one(match)
        out.append(_without_echo(before, value))
        out.append(value)
        at = match.end()
    out.append(text[at:])
    return "".join(out)


def _without_echo(before: str, value: str) -> str:
    """The template text before a name, less its last word when the name starts with that word: "Total
    {{this}}" for a column named Total reads "Total", not "Total Total"."""
    last = re.search(r"(\w+)(\s+)$", before)
    first = re.match(r"\w+", value)
    if last and first and last.group(1).casefold() == first.group(0).casefold():
        return before[:last.start()]
    return before


def _unit(col: Col) -> str:
    """A time bucket for a column from its fingerprint's range: months over two years, else weeks or days."""
    dates = ((col.fingerprint or {}).get("type") or {}).get("type/DateTime") or {}
    earliest, latest = str(dates.get("earliest") or ""), str(dates.get("latest") or "")
    if len(earliest) >= 10 and len(latest) >= 10:
        try:
            days = (int(latest[:4]) - int(earliest[:4])) * 365 + (int(latest[5:7]) - int(earliest[5:7])) * 30
        except ValueError:
            return "month"
        return "month" if days > 730 else "week" if days > 60 else "day"
    return "month"


def breakout_ref(col: Col, options: dict) -> list:
    if types.field_isa(col, "type/Temporal") or types.isa(col.effective_type, "type/Temporal"):
        return col.ref(**{"temporal-unit": options.get("unit") or _unit(col)})
    count = col.distinct_count
    numbers = ((col.fingerprint or {}).get("type") or {}).get("type/Number") or {}
    # Binning needs the fingerprint's range; without one the values are grouped as they are.
    if (types.isa(col.effective_type, "type/Number") and col.semantic_type not in ("type/PK", "type/FK")
            and (count is None or count > 20) and numbers.get("min") is not None and numbers.get("max") is not None):
        return col.ref(binning={"strategy": "default"})
    return col.ref()


def cards(template: Template, root: Root, bound: dict | None = None) -> list[Built]:
    bound = bind(template, root) if bound is None else bound
    out = []
    for spec in template.cards:
        metrics = [template.metrics[m] for m in spec.metrics]
        filters = [template.filters[f] for f in spec.filters]
        names = {d for d, _ in spec.dimensions} | set().union(*(_dimension_names(m) for m, _ in metrics + filters))
        if any(n not in bound for n in names):
            continue
        ordered = sorted(names)
        for combo in itertools.product(*(bound[n][0] for n in ordered)):
            if len({(c.id, c.name, c.via) for c in combo}) < len(combo):
                continue
            cols = dict(zip(ordered, combo))
            dim_scores = [bound[n][1] for n in ordered] or [100.0]
            score = spec.score * (sum(dim_scores) / len(dim_scores)) / 100
            aggregation = [_substitute(m, cols) for m, _ in metrics]
            breakout = [breakout_ref(cols[d], options) for d, options in spec.dimensions]
            order_by = []
            for key, direction in spec.order_by:
                direction = "desc" if str(direction).startswith("desc") else "asc"
                if key in spec.metrics:
                    order_by.append([direction, ["aggregation", spec.metrics.index(key)]])
                elif key in cols:
                    order_by.append([direction, cols[key].ref()])
            out.append(Built(spec, interpolate(spec.title, root, cols), score, aggregation, breakout,
                             [_substitute(f, cols) for f, _ in filters], order_by, cols))
    out.sort(key=lambda b: -b.score)
    # Two cards asking the same question (one column bound by two dimensions) keep the better one.
    seen, unique = set(), []
    for b in out:
        key = repr((b.aggregation, b.breakout, b.filters))
        if key not in seen:
            seen.add(key)
            unique.append(b)
    return unique


def choose(templates: dict, root: Root, forced: tuple[str, str] | None = None) -> tuple[Template, list[Built]]:
    """The template for the root and its cards: the one named by a rule, else the most specific one
    that applies and gives at least four cards (else the one giving most)."""
    if forced is not None:
        template = templates[forced]
        return template, cards(template, root)
    if root.focus is not None:
        candidates = [t for (kind, _), t in templates.items() if kind == "field"
                      and (t.applies_to == "type/*" or types.field_isa(root.focus, t.applies_to))]
        candidates.sort(key=lambda t: -len(types.ancestors(t.applies_to) - {"type/*"}))
    else:
        chain = types.entity_chain(root.entity_type)
        candidates = sorted((t for (kind, _), t in templates.items() if kind == "table" and t.applies_to in chain),
                            key=lambda t: chain.index(t.applies_to))
    best: tuple[Template, list[Built]] | None = None
    for template in candidates:
        built = cards(template, root)
        if len(built) >= 4:
            return template, built
        if best is None or len(built) > len(best[1]):
            best = (template, built)
    if best is None:
        raise LookupError("no template applies")
    return best
