"""Which plugins make up Tessera, and the plugin manager that loads them.

Built-in feature areas and drivers are listed here exactly as a third-party package would list
them in an entry point; operators disable or add them through configuration.
"""
from __future__ import annotations

import importlib
import importlib.metadata
from dataclasses import dataclass
from typing import Any, Callable

import pluggy

from core.assembly import hookspecs

from .config import split_names

BUILTIN_PLUGINS: tuple[str, ...] = (
    "plugins.session",
    "plugins.setup",
    "plugins.settings",
    "plugins.users",
    "plugins.permissions",
    "plugins.api_keys",
    "plugins.email",
    "plugins.util",
    "plugins.docs",
    "plugins.databases",
    "plugins.tables",
    "plugins.fields",
    "plugins.cards",
    "plugins.sharing",
    "plugins.collections",
    "plugins.search",
    "plugins.definitions",
    "plugins.bookmarks",
    "plugins.dataset",
    "plugins.exports",
    "plugins.snippets",
    "plugins.timelines",
    "plugins.dashboards",
    "plugins.actions",
    "plugins.revisions",
    "plugins.query_cache",
    "plugins.query_audit",
    "plugins.tasks",
    "plugins.subscriptions",
    "plugins.xrays",
    "plugins.activity",
    "plugins.sso",
    "plugins.serialization",
    "plugins.sandboxes",
    "plugins.app",
)

BUILTIN_DRIVERS: tuple[str, ...] = (
    "drivers.sqlite",
    "drivers.duckdb",
    "drivers.postgres",
    "drivers.mysql",
)

# The API cannot be set up or logged into without these (setup writes site-name, which plugins.settings declares).
ESSENTIAL_PLUGINS: frozenset[str] = frozenset({"plugins.session", "plugins.setup", "plugins.databases",
                                               "plugins.settings"})

# Former names of built-in plugins, still accepted in TESSERA_PLUGINS_DISABLED: segments and legacy
# metrics became one plugin, so disabling either name disables both /api/segment and /api/metric.
PLUGIN_ALIASES: dict[str, str] = {"plugins.segments": "plugins.definitions", "plugins.metrics": "plugins.definitions"}

PLUGIN_GROUP = "tessera.plugins"
DRIVER_GROUP = "tessera.drivers"


class PluginError(RuntimeError):
    """A plugin set that cannot start: an essential plugin disabled, a duplicate name, a bad hook."""


@dataclass(frozen=True)
class Contribution:
    """One item an assembly hook returned, with the plugin that returned it."""

    plugin: str
    item: Any


def _entry_points(group: str):
    return importlib.metadata.entry_points(group=group)


def make_plugin_manager(config: dict) -> pluggy.PluginManager:
    pm = pluggy.PluginManager("tessera")
    pm.add_hookspecs(hookspecs)
    disabled = {PLUGIN_ALIASES.get(name, name) for name in split_names(config.get("TESSERA_PLUGINS_DISABLED"))}
    refused = sorted(disabled & ESSENTIAL_PLUGINS)
    if refused:
        raise PluginError(f"essential plugins cannot be disabled: {', '.join(refused)}")
    disabled_drivers = set(split_names(config.get("TESSERA_DRIVERS_DISABLED")))

    from core.http import auth

    pm.register(auth, name="core.http.auth")
    from core.query import execution, limits

    # The query processor's own hook implementations: executing (trylast) and row limits (wrapper).
    pm.register(execution, name="core.query.execution")
    pm.register(limits, name="core.query.limits")
    from core.outbound import http as outbound_http

    # The outbound HTTP client's allow-list setting: core, because actions and webhooks both use it.
    pm.register(outbound_http, name="core.outbound.http")
    from core.schedule import housekeeping

    # The core's own scheduled jobs (expired sessions, old query executions, task history).
    pm.register(housekeeping, name="core.schedule.housekeeping")

    versions: dict[str, str] = {}
    pm.tessera_versions = versions  # read by describe_plugins

    def register(name: str, obj: Any, source: str, version: str | None = None) -> None:
        if pm.get_plugin(name) is not None:
            raise PluginError(f"plugin name {name!r} from {source} is already registered")
        pm.register(obj, name=name)
        if version:
            versions[name] = version

    for name in BUILTIN_PLUGINS:
        if name not in disabled:
            register(name, importlib.import_module(name), "BUILTIN_PLUGINS")
    for name in BUILTIN_DRIVERS:
        if name not in disabled_drivers:
            register(name, importlib.import_module(name), "BUILTIN_DRIVERS")
    for name in split_names(config.get("TESSERA_PLUGINS_EXTRA")):
        if name not in disabled:
            register(name, importlib.import_module(name), "TESSERA_PLUGINS_EXTRA")
    if config.get("TESSERA_PLUGINS_AUTOLOAD"):
        for group, skip in ((PLUGIN_GROUP, disabled), (DRIVER_GROUP, disabled_drivers)):
            for ep in _entry_points(group):
                if ep.name in skip or ep.value in skip:
                    continue
                version = ep.dist.version if ep.dist is not None else None
                register(ep.name, ep.load(), f"entry point {ep.value} ({group})", version)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(str(exc)) from exc
    return pm


def collect(pm: pluggy.PluginManager, hook_name: str, **kwargs) -> list[Contribution]:
    """Call an assembly hook plugin by plugin, keeping who returned what (for duplicate errors)."""
    contributions: list[Contribution] = []
    for impl in reversed(getattr(pm.hook, hook_name).get_hookimpls()):
        for item in impl.function(**kwargs) or ():
            contributions.append(Contribution(impl.plugin_name, item))
    return contributions


def unique_by(contributions: list[Contribution], key: Callable[[Any], str], what: str) -> dict[str, Contribution]:
    """Index contributions by key; a key claimed twice stops startup naming both plugins."""
    seen: dict[str, Contribution] = {}
    for contribution in contributions:
        k = key(contribution.item)
        if k in seen:
            raise PluginError(
                f"duplicate {what} {k!r}: registered by {seen[k].plugin} and by {contribution.plugin}"
            )
        seen[k] = contribution
    return seen


def plugin_migrations(pm: pluggy.PluginManager) -> list:
    """The plugins' own migration sets (core.assembly.records.Migrations), in plugin order."""
    return [c.item for c in unique_by(collect(pm, "register_migrations"), lambda m: m.name, "migrations name").values()]


def content_kinds(pm: pluggy.PluginManager) -> dict:
    """The contributed content kinds (core.assembly.records.ContentKind) by model; a duplicate or a
    built-in model name stops startup naming the plugin(s)."""
    from .records import BUILTIN_CONTENT_MODELS

    kinds = unique_by(collect(pm, "register_content_kinds"), lambda k: k.model, "content kind")
    for model, contribution in kinds.items():
        if model in BUILTIN_CONTENT_MODELS:
            raise PluginError(f"content kind {model!r} from {contribution.plugin} is a built-in kind")
    return {model: contribution.item for model, contribution in kinds.items()}


def shareables(pm: pluggy.PluginManager) -> dict:
    """The contributed shareable kinds (core.assembly.records.Shareable) by model; a duplicate model
    stops startup naming both plugins."""
    return {model: c.item for model, c in unique_by(collect(pm, "register_shareables"), lambda s: s.model,
                                                    "shareable model").items()}


def migrate_app_db(db, config: dict, pm: pluggy.PluginManager | None = None) -> None:
    """Bring the app DB up to date: the core's tables, then those of every enabled plugin."""
    db.migrate(plugin_migrations(pm or make_plugin_manager(config)))


def describe_plugins(pm: pluggy.PluginManager) -> list[dict]:
    """Each registered plugin with its version and the hooks it implements (for `tessera plugins`)."""
    from core.assembly import __version__

    rows = []
    for name, plugin in pm.list_name_plugin():
        version = getattr(pm, "tessera_versions", {}).get(name) or getattr(plugin, "__version__", None) or __version__
        hooks = sorted(caller.name for caller in pm.get_hookcallers(plugin) or ())
        rows.append({"name": name, "version": version, "hooks": hooks})
    return sorted(rows, key=lambda r: r["name"])
