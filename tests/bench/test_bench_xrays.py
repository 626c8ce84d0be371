"""bench/bench_xrays.py runs end to end and prints its target line (structure only; the figure is the
benchmark's business)."""
from __future__ import annotations

from bench import bench_xrays


def test_xray_bench_reports_its_target(capsys):
    bench_xrays.main(repeat=1)
    out = capsys.readouterr().out
    assert "x-ray of a 20-column table" in out and "target <= 300 ms" in out
