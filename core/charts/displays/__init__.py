"""Every display module, imported so that its @display functions register (core.charts.registry).
A new display is a module here and a line below; graph modules belong to the graphs' owner."""
import importlib

MODULES = ("table", "scalar", "graph", "pie", "scatter", "funnel", "waterfall")

for _name in MODULES:
    try:
        importlib.import_module(f"{__name__}.{_name}")
    except ModuleNotFoundError as exc:
        # A display module not written yet draws as the table fallback; any other missing module is a bug.
        if exc.name != f"{__name__}.{_name}":
            raise
