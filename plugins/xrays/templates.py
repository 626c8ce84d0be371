"""The x-ray templates: the plugin's own YAML files and those other plugins add through the
`register_xray_templates` hook, parsed once at startup into `Template` objects and kept per app.

A template (Metabase's "dashboard template") lists named `dimensions` (each name may have several
definitions; the best-scoring one that matches a field wins), `metrics` (MBQL aggregations whose
`[dimension, Name]` references are bound to fields), `filters`, `groups`, `dashboard_filters` and
`cards`. Lists of one-key maps keep the order the author wrote.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from core.assembly.plugins import PluginError, collect, unique_by
from core.assembly.records import XrayTemplate

DIRECTORY = Path(__file__).parent / "templates"
KINDS = ("table", "field")
DEFAULT_MAX_CARDS = 15


@dataclass(frozen=True)
class Dimension:
    name: str
    field_type: str
    score: float = 100
    linked: bool = False
    named: str | None = None
    links_to: str | None = None
    max_cardinality: int | None = None


@dataclass(frozen=True)
class CardSpec:
    name: str
    title: str
    display: str
    settings: dict
    metrics: tuple[str, ...]
    dimensions: tuple[tuple[str, dict], ...]
    filters: tuple[str, ...]
    order_by: tuple[tuple[str, str], ...]
    limit: int | None
    score: float
    group: str | None
    width: int
    height: int


@dataclass(frozen=True)
class Template:
    kind: str
    name: str
    applies_to: str
    title: str
    transient_title: str
    description: str
    dimensions: dict[str, tuple[Dimension, ...]]
    metrics: dict[str, tuple[list, float]]
    filters: dict[str, tuple[list, float]]
    groups: dict[str, str]
    dashboard_filters: tuple[str, ...]
    cards: tuple[CardSpec, ...]
    spec: dict = field(repr=False, compare=False, default_factory=dict)


def _pairs(items: list | None) -> list[tuple[str, Any]]:
    """[{Name: body}, ...] -> [(Name, body), ...]."""
    out = []
    for item in items or ():
        if not isinstance(item, dict) or len(item) != 1:
            raise ValueError(f"expected a one-key map, got {item!r}")
        out.extend(item.items())
    return out


def _card(name: str, body: dict) -> CardSpec:
    visualization = body.get("visualization", "table")
    display, settings = (visualization, {}) if isinstance(visualization, str) else (visualization[0], visualization[1])
    dimensions = []
    for item in body.get("dimensions") or ():
        dimensions.extend([(item, {})] if isinstance(item, str) else ((k, v or {}) for k, v in item.items()))
    order_by = tuple((k, v) for item in body.get("order_by") or () for k, v in item.items())
    return CardSpec(name, body.get("title", name), display, dict(settings), tuple(body.get("metrics") or ()),
                    tuple(dimensions), tuple(body.get("filters") or ()), order_by, body.get("limit"),
                    float(body.get("score", 50)), body.get("group"), int(body.get("width", 12)),
                    int(body.get("height", 4)))


def parse(kind: str, name: str, spec: dict) -> Template:
    """A template from its YAML structure; ValueError names what is wrong."""
    if kind not in KINDS:
        raise ValueError(f"template {name!r}: kind must be one of {KINDS}")
    dimensions: dict[str, list[Dimension]] = {}
    for dim_name, body in _pairs(spec.get("dimensions")):
        dimensions.setdefault(dim_name, []).append(Dimension(
            dim_name, body["field_type"], float(body.get("score", 100)), bool(body.get("linked")),
            body.get("named"), body.get("links_to"), body.get("max_cardinality")))
    metrics = {k: (v["metric"], float(v.get("score", 100))) for k, v in _pairs(spec.get("metrics"))}
    filters = {k: (v["filter"], float(v.get("score", 100))) for k, v in _pairs(spec.get("filters"))}
    cards = tuple(_card(k, v) for k, v in _pairs(spec.get("cards")))
    for card in cards:
        unknown = [m for m in card.metrics if m not in metrics] + [d for d, _ in card.dimensions if d not in dimensions]
        unknown += [f for f in card.filters if f not in filters]
        if unknown:
            raise ValueError(f"template {name!r}, card {card.name!r}: unknown {', '.join(unknown)}")
    return Template(kind, name, spec.get("applies_to", name), spec.get("title", name),
                    spec.get("transient_title") or spec.get("title", name), spec.get("description", ""),
                    {k: tuple(sorted(v, key=lambda d: -d.score)) for k, v in dimensions.items()}, metrics, filters,
                    {k: (v or {}).get("title", k) for k, v in _pairs(spec.get("groups"))},
                    tuple(spec.get("dashboard_filters") or ()), cards, spec)


# libyaml's safe loader where PyYAML was built with it: the same documents, parsed ten times faster
# (every app reads these at start; the pure-Python loader was a quarter of an app's start-up).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# (path, mtime, size) -> the document: every app of a process (the test suite builds one per test) reads
# the same files, and parsing them was a tenth of create_app. Apps share the documents as the requests
# of one app share its templates: nothing writes to them.
_parsed: dict[tuple[Path, int, int], Any] = {}


def _document(path: Path) -> Any:
    stat = path.stat()
    key = (path, stat.st_mtime_ns, stat.st_size)
    if key not in _parsed:
        _parsed[key] = yaml.load(path.read_text(), Loader=_LOADER)
    return _parsed[key]


def builtin() -> list[XrayTemplate]:
    """The plugin's own templates, one YAML file each under templates/<kind>/."""
    return [XrayTemplate(kind, path.stem, _document(path))
            for kind in KINDS for path in sorted((DIRECTORY / kind).glob("*.yaml"))]


def load(pm) -> dict[tuple[str, str], Template]:
    """Every template of every plugin by (kind, name); a duplicate or malformed one stops startup."""
    contributions = unique_by(collect(pm, "register_xray_templates"), lambda t: f"{t.kind}/{t.name}",
                              "x-ray template")
    out = {}
    for key, contribution in contributions.items():
        record = contribution.item
        try:
            out[(record.kind, record.name)] = parse(record.kind, record.name, record.spec)
        except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
            raise PluginError(f"x-ray template {key!r} from {contribution.plugin} is invalid: {exc}") from None
    return out


def registry() -> dict[tuple[str, str], Template]:
    """The templates of the current app (loaded by the plugin's startup hook)."""
    from flask import current_app

    return current_app.extensions["xrays"]
