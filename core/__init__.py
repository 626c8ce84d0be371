"""Tessera's core. Its public API for plugins and drivers is what this module exports."""
from core.assembly import __version__
from core.assembly.hookspecs import hookimpl
from core.assembly.records import (
    ContentKind,
    Event,
    Exporter,
    ItemRef,
    JobKind,
    JobRun,
    Migrations,
    Pages,
    Revisable,
    SettingDef,
    Shareable,
    SharedQuery,
    XrayTemplate,
)

__all__ = ["hookimpl", "__version__", "create_app", "Driver", "SQLDriver", "Event", "Exporter", "Migrations", "SettingDef",
           "ContentKind", "ItemRef", "Pages", "Revisable", "Shareable", "SharedQuery", "JobKind", "JobRun",
           "XrayTemplate"]


def __getattr__(name):
    # create_app and the driver base import most of the core; load them on first use so that
    # `from core import hookimpl` in a plugin module stays cheap and cycle-free.
    if name == "create_app":
        from core.assembly.app import create_app

        return create_app
    if name in {"Driver", "SQLDriver"}:
        from core import driver

        return getattr(driver, name)
    raise AttributeError(name)
