"""The import rules of the tree, checked on the source (nothing is imported or run).

- core never imports plugins or drivers (it loads them by name from the lists in core.assembly.plugins);
- a plugin never imports another plugin, nor a driver (plugins meet in core);
- a driver never imports a plugin;
- no import cycle inside core, counting imports inside functions too: a lazy import that closes a ring
  still ties the modules' meaning together, so it is a cycle here.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOP = ("core", "plugins", "drivers")


def _module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


# Parsed on first use, not at import: every pytest-xdist worker imports this module to collect it, and
# parsing the tree took two seconds of each.
@functools.cache
def _sources() -> dict[str, tuple[Path, bool]]:
    found = {}
    for top in TOP:
        for path in (ROOT / top).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            name, is_package = _module_name(path)
            found[name] = (path, is_package)
    return found


def _imported(name: str, path: Path, is_package: bool) -> set[str]:
    """Every module `name` imports anywhere in its text (top level, functions, TYPE_CHECKING blocks),
    resolved to the longest known module name."""
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                child = f"{module}.{alias.name}"
                targets.add(child if child in _sources() else module)
    return {t for t in targets if t != name and t.split(".")[0] in TOP}


@functools.cache
def _graph() -> dict[str, set[str]]:
    return {name: _imported(name, *where) for name, where in _sources().items()}


def _area(module: str) -> str:
    """core, drivers, or plugins.<name>: the unit the rules speak of."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "plugins" and len(parts) > 1 else parts[0]


def _violations(allowed) -> list[str]:
    return sorted(f"{source} imports {target}" for source, targets in _graph().items() for target in targets
                  if not allowed(_area(source), _area(target)))


def test_core_imports_neither_plugins_nor_drivers():
    assert _violations(lambda src, dst: src != "core" or dst == "core") == []


def test_plugins_import_only_core_and_themselves():
    assert _violations(lambda src, dst: not src.startswith("plugins") or dst in ("core", src)
                       or dst == "plugins") == []


def test_drivers_import_no_plugin():
    assert _violations(lambda src, dst: src != "drivers" or not dst.startswith("plugins")) == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle_inside_core():
    core_graph = {name: {t for t in targets if t.split(".")[0] == "core"}
                  for name, targets in _graph().items() if name.split(".")[0] == "core"}
    assert _cycles(core_graph) == []


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b"}, "b": {"a"}, "c": set()}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
])
def test_cycle_finder_sees_rings(graph, expected):
    assert _cycles(graph) == expected
