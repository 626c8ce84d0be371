"""Charts: a 10-series line chart of 1,000 x values (10,000 points) drawn from a card and its result
(core.charts.render_card: spec building and vl-convert) after the first chart of the process, which
starts vl-convert's runtime. Also the spec building alone, the cold first chart and a PNG.

Target: the warm SVG under 150 ms (issue 16). The line display comes from core/charts/displays; where it
is not registered the card falls back to a table and the run says so.
Run: .venv/bin/python bench/bench_charts.py [points]
"""
from __future__ import annotations

import datetime as dt
import math
import resource
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench.common import cpu_note  # noqa: E402
from bench.report import Target, report  # noqa: E402

SERIES = 10


def card_and_result(points: int) -> tuple[dict, dict]:
    day = {"name": "day", "display_name": "Day", "base_type": "type/Date", "effective_type": "type/Date",
           "unit": "day"}
    metrics = [{"name": f"m{i}", "display_name": f"Series {i}", "base_type": "type/Float",
                "effective_type": "type/Float"} for i in range(SERIES)]
    start = dt.date(2022, 1, 1)
    rows = [[(start + dt.timedelta(days=d)).isoformat()] + [round(100 + 40 * math.sin(d / 30 + i) + i * 10, 2)
                                                           for i in range(SERIES)] for d in range(points)]
    card = {"display": "line", "visualization_settings": {"graph.dimensions": ["day"],
                                                          "graph.metrics": [m["name"] for m in metrics]}}
    return card, {"data": {"cols": [day] + metrics, "rows": rows}, "row_count": points}


def measured(fn, repeat: int) -> tuple[float, float]:
    """Median wall and median CPU seconds of fn() after one warm-up call. CPU time counts every thread of
    the process (vl-convert draws in its own threads), so it is the figure to read on a loaded machine."""
    fn()
    walls, cpus = [], []
    for _ in range(repeat):
        before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        fn()
        after = resource.getrusage(resource.RUSAGE_SELF)
        walls.append(time.perf_counter() - started)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def main(points: int = 1000) -> dict:
    from core.charts import chart_spec, render_card
    from core.charts.registry import DISPLAYS

    card, result = card_and_result(points)
    started = time.perf_counter()
    render_card(card, result, "svg")
    cold = time.perf_counter() - started
    svg, svg_cpu = measured(lambda: render_card(card, result, "svg"), 9)
    png, png_cpu = measured(lambda: render_card(card, result, "png"), 5)
    spec, spec_cpu = measured(lambda: chart_spec(card, result), 9)
    drawn = "line" if "line" in DISPLAYS else "table (line display not registered here)"
    load = " ".join(f"{x:.1f}" for x in __import__("os").getloadavg())
    print(f"{SERIES} series x {points} points as {drawn}; {cpu_note()}, load {load}; first chart of the "
          f"process {cold * 1000:.0f} ms (starts vl-convert)")
    report([Target(f"line {SERIES}x{points} card -> SVG, warm, wall (ms)", svg * 1000, 150, unit=" ms"),
            Target(f"line {SERIES}x{points} card -> SVG, warm, CPU (ms)", svg_cpu * 1000, 150, unit=" ms",
                   detail="all threads; the wall figure on an idle machine"),
            Target(f"line {SERIES}x{points} card -> PNG, warm, wall (ms)", png * 1000, 300, unit=" ms",
                   detail=f"CPU {png_cpu * 1000:.0f} ms; no issue target, reported"),
            Target("  of which card -> Vega-Lite spec, wall (ms)", spec * 1000, 30, unit=" ms",
                   detail=f"CPU {spec_cpu * 1000:.0f} ms")], "charts")
    return {"svg_ms": svg * 1000, "svg_cpu_ms": svg_cpu * 1000, "png_ms": png * 1000, "spec_ms": spec * 1000,
            "cold_ms": cold * 1000}


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
