"""The URL rule class of Tessera's Flask apps: werkzeug's Rule, with what binding a rule works out (its
parsed parts and the URL builders it compiles) kept per process and shared by every app that has the
same rule.

Binding a rule parses its text and compiles two Python functions that build its URL (werkzeug generates
and compiles their source); for Tessera's five hundred-odd rules that was most of create_app's time,
and the parts were a third of the objects each app left for the garbage collector. One process builds
many apps (the test suite builds one per test; `tessera` instances and the scheduler build their own),
always from the same rules, so each is worked out once and reused.
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
    _parsed: dict[tuple, tuple] = {}
    _lock = threading.Lock()

    def compile(self) -> None:
        """werkzeug's compile, with the parse of an equal rule reused: its parts and trace depend only on
        the rule's text, the slash policy and the converter classes, which the key holds. Each app still
        gets converters of its own map, made from the arguments the first parse recorded."""
        domain = (self.host if self.map.host_matching else self.subdomain) or ""
        key = (self.rule, domain, self.merge_slashes, self.map.host_matching,
               tuple(sorted(self.map.converters.items())))
        parsed = self._parsed.get(key)
        if parsed is None:
            self._recorded: list[tuple] = []
            super().compile()
            parsed = (tuple(self._parts), tuple(self._trace), tuple(self._recorded))
            del self._recorded
            with self._lock:
                self._parsed.setdefault(key, parsed)
            return
        parts, trace, converters = parsed
        self._parts, self._trace = list(parts), list(trace)
        self._converters = {variable: self.get_converter(variable, name, args, kwargs)
                            for variable, name, args, kwargs in converters}
        self.arguments.update(self._converters)
        self._build = self._compile_builder(False).__get__(self, None)
        self._build_unknown = self._compile_builder(True).__get__(self, None)

    def get_converter(self, variable_name, converter_name, args, kwargs):
        recorded = getattr(self, "_recorded", None)
        if recorded is not None:
            recorded.append((variable_name, converter_name, args, kwargs))
        return super().get_converter(variable_name, converter_name, args, kwargs)

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
