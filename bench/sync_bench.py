"""Schema sync against plain SQLAlchemy reflection, on a generated 500-table x 20-column SQLite file.

    python -m bench.sync_bench [--tables 500] [--columns 20] [--rows 0] [--repeat 3]

Reflection is `MetaData.reflect()` on a fresh engine (columns, primary and foreign keys, indexes).
Sync is Tessera's whole core.sync.schema.sync_database on a freshly registered database: introspection
through the driver, the app-DB writes (SQLite app DB), fingerprints, classification and field values.
Each is run `repeat` times from a cold start; the best times are compared. Two ratios are printed:
the metadata sync (introspection plus app-DB writes, what reflection also does) and the whole sync,
which also samples every table once for fingerprints and values. Target: ratio <= 1.5.
"""
from __future__ import annotations

import argparse
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

TYPES = ("INTEGER", "TEXT", "FLOAT", "DATETIME", "BOOLEAN")


def generate(path: Path, tables: int, columns: int, rows: int) -> None:
    conn = sqlite3.connect(path)
    for t in range(tables):
        cols = ["id INTEGER PRIMARY KEY"]
        if t > 0:
            cols.append(f"parent_id INTEGER REFERENCES table_{t - 1:03d}(id)")
        while len(cols) < columns:
            i = len(cols)
            cols.append(f"column_{i:02d} {TYPES[i % len(TYPES)]}")
        conn.execute(f"CREATE TABLE table_{t:03d} ({', '.join(cols)})")
        if rows:
            width = len(cols)
            values = [tuple([r + 1] + [None if t == 0 and c == 1 else (r % 7) for c in range(1, width)]) for r in range(rows)]
            conn.executemany(f"INSERT INTO table_{t:03d} VALUES ({', '.join('?' * width)})", values)
    conn.commit()
    conn.close()


def reflect_once(path: Path) -> tuple[float, float]:
    from sqlalchemy import MetaData, create_engine

    engine = create_engine(f"sqlite:///{path}")
    started, cpu = time.perf_counter(), time.process_time()
    metadata = MetaData()
    metadata.reflect(engine)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert len(metadata.tables) > 0
    engine.dispose()
    return elapsed, cpu


def sync_once(source: Path, workdir: Path, template: Path) -> tuple[float, dict, int]:
    from sqlalchemy import func, select

    from core.appdb.models import Database, Field
    from core.assembly.app import create_app
    from core.driver import crypto
    from core.sync import schema as sync

    data_dir = workdir / f"run-{time.monotonic_ns()}"
    (data_dir / "files").mkdir(parents=True)
    shutil.copy(template, data_dir / "tessera.db")
    db_file = data_dir / "files" / source.name
    shutil.copy(source, db_file)
    app = create_app({"TESSERA_DATA_DIR": str(data_dir), "TESSERA_DB_URL": f"sqlite:///{data_dir / 'tessera.db'}",
                      "TESSERA_RUN_MIGRATIONS": False, "TESSERA_PLUGINS_AUTOLOAD": False})
    state = app.extensions["tessera"]
    with app.app_context():
        with state.db.session() as session:
            database = Database(name="bench", engine="sqlite", details=crypto.encrypt_details({"db": str(db_file)}))
            session.add(database)
            session.flush()
            database_id = database.id
        timings: dict = {}
        started, cpu = time.perf_counter(), time.process_time()
        ok = sync.sync_database(state, database_id, timings)
        elapsed = time.perf_counter() - started
        timings["cpu"] = time.process_time() - cpu
        assert ok, "sync failed"
        with state.db.session() as session:
            fields = session.scalar(select(func.count()).select_from(Field))
    state.db.dispose()
    return elapsed, timings, fields


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=500)
    parser.add_argument("--columns", type=int, default=20)
    parser.add_argument("--rows", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    import logging

    logging.getLogger("tessera").setLevel(logging.WARNING)
    from core.appdb.db import AppDatabase
    from core.assembly.plugins import migrate_app_db

    with tempfile.TemporaryDirectory(prefix="tessera-bench-") as tmp:
        workdir = Path(tmp)
        source = workdir / "wide.db"
        generate(source, args.tables, args.columns, args.rows)
        template = workdir / "template.db"
        app_db = AppDatabase(f"sqlite:///{template}")
        migrate_app_db(app_db, {"TESSERA_PLUGINS_AUTOLOAD": False})
        app_db.dispose()
        reflections, runs = [], []
        for _ in range(args.repeat):  # interleaved, so that a busy machine hurts both alike
            reflections.append(reflect_once(source))
            runs.append(sync_once(source, workdir, template))
    reflection = min(r[0] for r in reflections)
    reflection_cpu = min(r[1] for r in reflections)
    best = min(r[0] for r in runs)
    best_cpu = min(r[1]["cpu"] for r in runs)
    metadata_only = min(r[1]["introspect"] + r[1]["write"] for r in runs)
    analysis = min(r[1]["analyze"] for r in runs)
    fields = runs[0][2]
    print(f"schema: {args.tables} tables x {args.columns} columns, {args.rows} rows each ({fields} fields synced)")
    print(f"SQLAlchemy MetaData.reflect:        {reflection:.3f} s wall, {reflection_cpu:.3f} s CPU (best of {args.repeat})")
    print(f"Tessera metadata sync (read+write): {metadata_only:.3f} s wall   ratio {metadata_only / reflection:.2f}")
    print(f"Tessera whole sync (+ analysis {analysis:.3f} s): {best:.3f} s wall   ratio {best / reflection:.2f}; "
          f"{best_cpu:.3f} s CPU   ratio {best_cpu / reflection_cpu:.2f}")
    print("target: ratio <= 1.5")


if __name__ == "__main__":
    main()
