"""bench/bench_export.py runs end to end on a tiny table: every engine and format is measured in its
own process and reported as a target line (structure only; speed is the benchmark's business)."""
from __future__ import annotations

import shutil

import pytest

from bench import bench_export


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="the sqlite3 shell is the CSV reference")
def test_export_bench_reports_every_target(capsys):
    pytest.importorskip("duckdb")
    measured = bench_export.measure(200, repeat=1)
    assert set(measured["runs"]) == {(e, f) for e in bench_export.ENGINES for f in bench_export.FORMATS}
    for (engine, fmt), run in measured["runs"].items():
        assert run["big"]["bytes"] > 100 and run["small"]["bytes"] > 100, (engine, fmt)
        assert run["big"]["peak_mib"] > 0 and run["big"]["seconds"] > 0
    assert all(seconds > 0 for seconds in measured["refs"].values())
    names = [t.name for t in bench_export.targets(measured)]
    assert len(names) == 2 + 2 + 2 + 6 and len(set(names)) == len(names)
    bench_export.report(bench_export.targets(measured), "exports")
    assert "CSV from DuckDB / DuckDB COPY TO" in capsys.readouterr().out
