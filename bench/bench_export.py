"""(b) CSV export of every row through POST /api/dataset/csv against the sqlite3 command-line tool's
own CSV output of the same table, and (c) XLSX export rows per second; each export's peak RSS is
measured in a fresh process at 10,000 and at 1,000,000 rows.

Targets: CSV at most 1.5x the sqlite3 CLI; peak RSS growing less than 100 MiB from 10k to 1M rows;
XLSX at least 33,000 rows/s with flat memory.
Run: .venv/bin/python bench/bench_export.py [rows]
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import Bench, cpu_note, make_sqlite, peak_rss_mib

HERE = Path(__file__).resolve().parent


def child(fmt: str, files: str, rows: int) -> None:
    """In a fresh process: export every row once, print seconds, bytes and peak RSS as JSON."""
    bench = Bench(rows, data_files=Path(files))
    db = bench.databases["sqlite"]
    query = {"database": db["database"], "type": "query", "query": {"source-table": db["table"]}}
    baseline = peak_rss_mib()
    start, cpu = time.perf_counter(), time.process_time()
    response = bench.client.post(f"/api/dataset/{fmt}", json={"query": query}, buffered=False)
    assert response.status_code == 200, response.status_code
    size = 0
    for chunk in response.response:
        size += len(chunk)
    response.close()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(json.dumps({"seconds": seconds, "cpu": cpu, "bytes": size, "peak_rss_mib": peak_rss_mib(),
                      "before_mib": baseline}))
    bench.app.extensions["tessera"].db.dispose()


def run_child(fmt: str, files: Path, rows: int) -> dict:
    out = subprocess.run([sys.executable, str(HERE / "bench_export.py"), "--child", fmt, str(files), str(rows)],
                         capture_output=True, text=True, check=True)
    return json.loads([line for line in out.stdout.splitlines() if line.startswith("{")][-1])


def sqlite_cli(path: Path) -> tuple[float, int, float]:
    """Wall seconds, bytes written and CPU seconds of the sqlite3 tool writing the table as CSV."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(["sqlite3", "-csv", "-header", str(path), "SELECT * FROM orders"], capture_output=True,
                         check=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return seconds, len(out.stdout), cpu


def python_floor(path: Path) -> float:
    """sqlite3.fetchmany + csv.writer with nothing else: what any Python CSV export costs at least."""
    import csv
    import io
    import sqlite3

    start = time.perf_counter()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    cursor = conn.execute("SELECT * FROM orders")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([d[0] for d in cursor.description])
    while True:
        batch = cursor.fetchmany(2000)
        if not batch:
            break
        writer.writerows(batch)
        if buffer.tell() > 65536:
            buffer.getvalue().encode()
            buffer.seek(0)
            buffer.truncate()
    conn.close()
    return time.perf_counter() - start


def openpyxl_write_only(rows: int = 100_000) -> float:
    """Rows per second of openpyxl's write-only mode on the same kind of rows (why xlsx is hand-written)."""
    import datetime as dt
    import io

    import openpyxl

    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("Query result")
    start = time.perf_counter()
    base = dt.datetime(2022, 1, 1)
    for i in range(rows):
        sheet.append([i, (i * 7919) % 5000, "Gizmo", i % 9, i * 1.5, base + dt.timedelta(seconds=i)])
    book.save(io.BytesIO())
    return rows / (time.perf_counter() - start)


def main(rows: int = 1_000_000) -> dict:
    work = Path(tempfile.mkdtemp(prefix="tessera-bench-files-"))
    try:
        small, big = work / "small", work / "big"
        small.mkdir()
        big.mkdir()
        make_sqlite(small / "orders.sqlite", 10_000)
        make_sqlite(big / "orders.sqlite", rows)
        results: dict = {}
        # The CLI and the CSV export alternate, so that a machine whose load changes during the run
        # weighs on both alike; each side's median is kept, and CPU seconds are reported beside wall.
        clis, csvs = [], []
        for _ in range(3):
            clis.append(sqlite_cli(big / "orders.sqlite"))
            csvs.append(run_child("csv", big, rows))
        cli = sorted(clis)[1]
        results["sqlite_cli"] = {"seconds": cli[0], "bytes": cli[1], "cpu": sorted(c[2] for c in clis)[1]}
        results["python_floor"] = sorted(python_floor(big / "orders.sqlite") for _ in range(3))[1]
        for fmt in ("csv", "xlsx"):
            small_run = run_child(fmt, small, 10_000)
            big_runs = sorted(csvs if fmt == "csv" else [run_child(fmt, big, rows)], key=lambda r: r["seconds"])
            big_run = big_runs[len(big_runs) // 2]
            results[fmt] = {"seconds": big_run["seconds"], "bytes": big_run["bytes"],
                            "cpu": sorted(r["cpu"] for r in big_runs)[len(big_runs) // 2],
                            "rows_per_second": rows / big_run["seconds"],
                            "peak_rss_10k": small_run["peak_rss_mib"], "peak_rss_big": big_run["peak_rss_mib"],
                            "rss_growth": big_run["peak_rss_mib"] - small_run["peak_rss_mib"]}
        results["csv"]["ratio_to_cli"] = results["csv"]["seconds"] / results["sqlite_cli"]["seconds"]
        results["csv"]["cpu_ratio_to_cli"] = results["csv"]["cpu"] / results["sqlite_cli"]["cpu"]
        results["openpyxl_write_only_rows_per_second"] = openpyxl_write_only()
        return results
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        sys.exit(0)
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    r = main(rows)
    c, x, cli = r["csv"], r["xlsx"], r["sqlite_cli"]
    print(f"export bench, {rows:,} rows x 6 columns, {cpu_note()}")
    print(f"  sqlite3 -csv      {cli['seconds']:7.2f} s  {cli['bytes'] / 2**20:7.1f} MiB  (CPU {cli['cpu']:.2f} s)")
    print(f"  sqlite3+csv.writer {r['python_floor']:6.2f} s  (no Tessera: the floor for Python, "
          f"{r['python_floor'] / cli['seconds']:.2f}x the CLI)")
    print(f"  /api/dataset/csv  {c['seconds']:7.2f} s  {c['bytes'] / 2**20:7.1f} MiB  ratio {c['ratio_to_cli']:.2f}x  "
          f"peak RSS {c['peak_rss_10k']:.0f} -> {c['peak_rss_big']:.0f} MiB (+{c['rss_growth']:.1f})  "
          f"(CPU {c['cpu']:.2f} s, {c['cpu_ratio_to_cli']:.2f}x the CLI's)")
    print(f"  /api/dataset/xlsx {x['seconds']:7.2f} s  {x['bytes'] / 2**20:7.1f} MiB  {x['rows_per_second']:,.0f} rows/s  "
          f"peak RSS {x['peak_rss_10k']:.0f} -> {x['peak_rss_big']:.0f} MiB (+{x['rss_growth']:.1f})")
    print(f"  (openpyxl write-only mode, same kind of rows: {r['openpyxl_write_only_rows_per_second']:,.0f} rows/s)")
    print(f"  CSV target <= 1.5x: {'met' if c['ratio_to_cli'] <= 1.5 else 'NOT met'}; "
          f"CSV RSS growth < 100 MiB: {'met' if c['rss_growth'] < 100 else 'NOT met'}; "
          f"XLSX >= 33,000 rows/s: {'met' if x['rows_per_second'] >= 33000 else 'NOT met'}; "
          f"XLSX RSS growth < 100 MiB: {'met' if x['rss_growth'] < 100 else 'NOT met'}")
