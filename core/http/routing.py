"""The URL rule class of Tessera's Flask apps: werkzeug's Rule, with the URL builders it compiles for each
rule kept per process and shared by every app that has the same rule.

Binding a rule compiles two Python functions that build its URL (werkzeug generates and compiles their
source); for Tessera's three hundred-odd routes that was three quarters of create_app's time. One
process builds many apps (the test suite builds one per test; `tessera` instances and the scheduler
build their own), always from the same rules, so each builder is compiled once and reused.
"""
from __future__ import annotations

import threading

from werkzeug.routing import Rule


class SharedBuilderRule(Rule):
    """A Rule whose compiled URL builders are shared between equal rules of different apps.

    A builder is a function of the rule's text, its parsed parts (`_trace`), the names of its defaults
    and whether unknown values are appended; it reaches converters through the rule it is bound to, so
    sharing it is exact. A rule with a default for one of its own variables has that default converted
    into the builder's code by the map's converter: such a rule is compiled as werkzeug does."""

    _builders: dict[tuple, object] = {}
    _lock = threading.Lock()

    def _compile_builder(self, append_unknown: bool = True):
        trace = getattr(self, "_trace", None)
        defaults = tuple(self.defaults or ())
        if trace is None or any(is_dynamic and data in defaults for is_dynamic, data in trace):
            return super()._compile_builder(append_unknown)
        key = (self.rule, tuple(trace), defaults, append_unknown)
        builder = self._builders.get(key)
        if builder is None:
            builder = super()._compile_builder(append_unknown)
            with self._lock:
                builder = self._builders.setdefault(key, builder)
        return builder
