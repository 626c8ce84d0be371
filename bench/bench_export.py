"""Downloads (POST /api/dataset/{csv,json,xlsx}) of every row of the generated orders table, on SQLite and
DuckDB, against each engine's own export measured in the same run:

- CSV from SQLite vs the sqlite3 shell (`sqlite3 -csv -header file "SELECT * FROM orders"`, i.e. `.mode
  csv`): target at most 1.0x; CSV from DuckDB vs DuckDB's `COPY (SELECT * FROM orders) TO 'f.csv'` timed in
  this process with the Python duckdb module: at most 2x.
- JSON vs fetching the rows with the sqlite3 module and encoding them with orjson in one process (an
  array of objects keyed by column name, as the download is): at most 1.5x, on both engines (the
  DuckDB module + orjson reference is printed beside).
- XLSX: at least 150,000 rows per second.
- Memory: every download runs in a fresh process, at 10,000 rows and at the full size; the peak RSS
  (ru_maxrss) may grow less than 100 MiB from one to the other. RSS before and after are printed too.

Run: python -m bench.bench_export [rows] [--repeat N]   (or python bench/bench_export.py [rows])
Wall-clock medians of N interleaved runs (export, reference, export, ...); ratios, not times, compare.
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import FIELDS, Bench, cpu_note, make_duckdb, make_sqlite, peak_rss_mib  # noqa: E402
from bench.report import Target, report  # noqa: E402

ENGINES = ("sqlite", "duckdb")
FORMATS = ("csv", "json", "xlsx")
SMALL = 10_000
BATCH = 2000


def rss_mib() -> float:
    """The process's resident set now (ru_maxrss is only the peak)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def child(engine: str, fmt: str, files: str, rows: int) -> None:
    """In a fresh process: download every row once, print seconds, bytes and RSS as JSON."""
    bench = Bench(rows, engines=(engine,), data_files=Path(files))
    db = bench.databases[engine]
    query = {"database": db["database"], "type": "query", "query": {"source-table": db["table"]}}
    # A server that has answered a query already: the driver imported, the database connected.
    warm = bench.client.post("/api/dataset", json={**query, "query": {**query["query"], "limit": 1}})
    assert warm.status_code == 202, warm.json
    before = rss_mib()
    start, cpu = time.perf_counter(), time.process_time()
    response = bench.client.post(f"/api/dataset/{fmt}", json={"query": query}, buffered=False)
    assert response.status_code == 200, response.status_code
    size = 0
    for chunk in response.response:
        size += len(chunk)
    response.close()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(json.dumps({"seconds": seconds, "cpu": cpu, "bytes": size, "peak_mib": peak_rss_mib(),
                      "before_mib": before, "after_mib": rss_mib()}))
    bench.close()


def run_child(engine: str, fmt: str, files: Path, rows: int) -> dict:
    out = subprocess.run([sys.executable, "-m", "bench.bench_export", "--child", engine, fmt, str(files), str(rows)],
                         capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"{engine} {fmt} export failed:\n{out.stderr[-3000:]}")
    return json.loads([line for line in out.stdout.splitlines() if line.startswith("{")][-1])


# ---- references -------------------------------------------------------------------------------------


class Clock:
    """Wall and CPU seconds of a block (CPU: this process's threads and the children it waited for)."""

    def __enter__(self):
        import resource

        self.resource = resource
        self.wall, self.cpu = time.perf_counter(), self._cpu()
        return self

    def _cpu(self) -> float:
        children = self.resource.getrusage(self.resource.RUSAGE_CHILDREN)
        return time.process_time() + children.ru_utime + children.ru_stime

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.wall, self._cpu() - self.cpu


def sqlite_shell(path: Path) -> Clock:
    """The sqlite3 shell writing the table as CSV with a header (.mode csv)."""
    with Clock() as clock:
        subprocess.run(["sqlite3", "-csv", "-header", str(path), "SELECT * FROM orders"], stdout=subprocess.DEVNULL,
                       check=True)
    return clock


def duckdb_copy(path: Path, work: Path) -> Clock:
    """Seconds of DuckDB's own CSV writer (COPY ... TO a file), in this process, connection made first."""
    import duckdb

    from drivers.duckdb import LOCKED_CONFIG

    out = work / "copy.csv"
    conn = duckdb.connect(str(path), read_only=True, config={"threads": LOCKED_CONFIG["threads"]})
    try:
        with Clock() as clock:
            conn.execute(f"COPY (SELECT * FROM orders) TO '{out}' (HEADER)")
        return clock
    finally:
        conn.close()
        out.unlink(missing_ok=True)


def fetch_orjson(engine: str, path: Path) -> Clock:
    with Clock() as clock:
        _fetch_orjson(engine, path)
    return clock


def _fetch_orjson(engine: str, path: Path) -> None:
    """Seconds to fetch every row with the engine's Python module and encode them with orjson, as an
    array of objects keyed by column name, a batch at a time."""
    import orjson

    if engine == "sqlite":
        import sqlite3

        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        cursor = conn.execute("SELECT * FROM orders")
    else:
        import duckdb

        conn = duckdb.connect(str(path), read_only=True)
        cursor = conn.execute("SELECT * FROM orders")
    names = [d[0] for d in cursor.description]
    size = 0
    while batch := cursor.fetchmany(BATCH):
        size += len(orjson.dumps([dict(zip(names, row)) for row in batch]))
    conn.close()


# ---- the run ----------------------------------------------------------------------------------------


def median_run(runs: list[dict]) -> dict:
    runs = sorted(runs, key=lambda r: r["seconds"])
    middle = dict(runs[len(runs) // 2])
    middle["peak_mib"] = max(r["peak_mib"] for r in runs)
    return middle


def measure(rows: int, repeat: int) -> dict:
    work = Path(tempfile.mkdtemp(prefix="tessera-bench-export-"))
    try:
        small, big = work / "small", work / "big"
        for folder, count in ((small, SMALL), (big, rows)) if rows > SMALL else ((big, rows),):
            folder.mkdir()
            make_sqlite(folder / "orders.sqlite", count)
            make_duckdb(folder / "orders.duckdb", count)
        refs = {"shell": [], "copy": [], "sqlite_orjson": [], "duckdb_orjson": []}
        runs: dict = {}
        for engine in ENGINES:
            for fmt in FORMATS:
                big_runs = []
                for _ in range(repeat if fmt != "xlsx" else max(1, repeat // 2)):
                    big_runs.append(run_child(engine, fmt, big, rows))
                    # The references interleave with the exports, so that load changes weigh on both.
                    if fmt == "csv":
                        refs["shell" if engine == "sqlite" else "copy"].append(
                            sqlite_shell(big / "orders.sqlite") if engine == "sqlite"
                            else duckdb_copy(big / "orders.duckdb", work))
                    elif fmt == "json":
                        refs[f"{engine}_orjson"].append(fetch_orjson(engine, big / f"orders.{engine}"))
                big_run = median_run(big_runs)
                runs[engine, fmt] = {"big": big_run,
                                     "small": run_child(engine, fmt, small, SMALL) if rows > SMALL else big_run}
        return {"rows": rows, "refs": {k: statistics.median(c.wall for c in v) for k, v in refs.items()},
                "ref_cpu": {k: statistics.median(c.cpu for c in v) for k, v in refs.items()}, "runs": runs}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def targets(measured: dict) -> list[Target]:
    rows, refs, cpus, runs = measured["rows"], measured["refs"], measured["ref_cpu"], measured["runs"]
    out = []

    def versus(run: dict, ref: str) -> str:
        return (f"{run['seconds']:.2f} s vs {refs[ref]:.2f} s; CPU {run['cpu']:.2f} s vs {cpus[ref]:.2f} s, "
                f"{run['cpu'] / cpus[ref]:.2f}x")

    for engine, ref, name, bound in (("sqlite", "shell", "CSV from SQLite / sqlite3 shell .mode csv", 1.0),
                                     ("duckdb", "copy", "CSV from DuckDB / DuckDB COPY TO", 2.0)):
        csv_run = runs[engine, "csv"]["big"]
        out.append(Target(name, csv_run["seconds"] / refs[ref], bound, detail=versus(csv_run, ref)))
    for engine in ENGINES:
        json_run = runs[engine, "json"]["big"]
        own = refs[f"{engine}_orjson"]
        out.append(Target(f"JSON from {engine} / sqlite3 module + orjson", json_run["seconds"] / refs["sqlite_orjson"],
                          1.5, detail=f"{versus(json_run, 'sqlite_orjson')}; "
                                      f"{json_run['seconds'] / own:.2f}x {engine} module + orjson"))
    for engine in ENGINES:
        xlsx_run = runs[engine, "xlsx"]["big"]
        out.append(Target(f"XLSX from {engine} rows per second", rows / xlsx_run["seconds"], 150_000, at_most=False,
                          unit="", detail=f"{xlsx_run['seconds']:.2f} s; "
                                          f"{rows / xlsx_run['cpu']:,.0f} rows per CPU second"))
    for engine in ENGINES:
        for fmt in FORMATS:
            big, small = runs[engine, fmt]["big"], runs[engine, fmt]["small"]
            growth = big["peak_mib"] - small["peak_mib"]
            out.append(Target(f"RSS growth {engine} {fmt}, {SMALL:,} -> {rows:,} rows", growth, 100, unit=" MiB",
                              detail=f"peak {small['peak_mib']:.0f} -> {big['peak_mib']:.0f} MiB; at {rows:,}: "
                                     f"{big['before_mib']:.0f} MiB before, {big['after_mib']:.0f} after"))
    return out


def main(rows: int = 1_000_000, repeat: int = 3) -> bool:
    measured = measure(rows, repeat)
    print(f"export bench, {rows:,} rows x {len(FIELDS)} columns, median of {repeat} runs, {cpu_note()}")
    return report(targets(measured), "exports")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "--child":
        child(args[1], args[2], args[3], int(args[4]))
        sys.exit(0)
    repeat = 3
    if "--repeat" in args:
        at = args.index("--repeat")
        repeat = int(args[at + 1])
        del args[at:at + 2]
    sys.exit(0 if main(int(args[0]) if args else 1_000_000, repeat) else 1)
