"""A directory of CSV files as a read-only database: each `*.csv` is a table named after the file.

The files are loaded with DuckDB's CSV reader into a private snapshot database (a DuckDB file in a
0700 temporary directory), and every query connection opens that snapshot read-only with DuckDB
locked down exactly as Tessera's own DuckDB driver does: external access off, no extensions,
configuration locked. Queries therefore never read the directory, let alone other paths. A new
session (one per query; sessions are never pooled) uses a new snapshot once a file was added,
removed or changed.
"""
from __future__ import annotations

import contextlib
import os
import re
import tempfile
import threading
from pathlib import Path

import duckdb
from duckdb_engine import ConnectionWrapper
from pydantic import Field
from sqlalchemy.engine import URL, Engine

from core.driver import (
    ConnectionPolicy,
    FieldMeta,
    FileDetails,
    FKMeta,
    LockdownError,
    TableMeta,
    check_file_path,
)
from drivers.duckdb import DuckDBDriver, SessionPerQuery, unlocked_settings

BASE_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False,
               "allow_community_extensions": False, "threads": min(4, os.cpu_count() or 1), "memory_limit": "1GB"}
LOCKED_CONFIG = {**BASE_CONFIG, "enable_external_access": False, "lock_configuration": True}


def table_name(path: Path) -> str:
    return re.sub(r"\W", "_", path.stem).lower() or "_"


class Snapshot:
    """The DuckDB copy of one CSV directory, rebuilt when the directory's files change."""

    def __init__(self, directory: str):
        self.directory = Path(directory)
        self.workdir = tempfile.mkdtemp(prefix="tessera-csv-")  # mkdtemp makes it 0700
        self.lock = threading.Lock()
        self.signature: tuple | None = None
        self.path: str | None = None
        self.generation = 0
        self.anchor = None
        self.anchor_path: str | None = None

    def files(self) -> list[Path]:
        files = []
        for path in sorted(self.directory.glob("*.csv")):
            real = Path(os.path.realpath(path))
            # A symlink must not smuggle in a file from outside the registered directory.
            if real.parent == Path(os.path.realpath(self.directory)) and real.is_file():
                files.append(real)
        return files

    def current(self) -> str:
        files = self.files()
        signature = tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in files)
        with self.lock:
            if signature != self.signature or self.path is None:
                self.generation += 1
                path = os.path.join(self.workdir, f"snapshot-{self.generation}.duckdb")
                writer = duckdb.connect(path, config=dict(BASE_CONFIG))
                try:
                    for csv in files:
                        writer.read_csv(str(csv), header=True).create(table_name(csv))
                finally:
                    writer.close()
                old, self.path, self.signature = self.path, path, signature
                if old:  # open connections keep their file until they close (POSIX unlink)
                    with contextlib.suppress(OSError):
                        os.unlink(old)
            return self.path

    def __call__(self):
        """A fresh DuckDB session on the current snapshot (no session state survives a query)."""
        path = self.current()
        with self.lock:
            if self.anchor_path != path:
                if self.anchor is not None:
                    self.anchor.close()
                self.anchor = duckdb.connect(path, read_only=True, config=dict(LOCKED_CONFIG))
                self.anchor_path = path
            return ConnectionWrapper(self.anchor.cursor())

    def close(self) -> None:
        with self.lock:
            if self.anchor is not None:
                self.anchor.close()
            self.anchor = self.anchor_path = None


class CSVDetails(FileDetails):
    file_field = "directory"
    directory: str = Field(title="Directory of CSV files", description="Each .csv file is a table; the first line names the columns.",
                           json_schema_extra={"placeholder": "/srv/tessera/files/exports"})


class CSVDriver(DuckDBDriver):
    """DuckDB underneath: the type map, the timeout guard, the catalog queries and the
    session-per-query pool are DuckDB's; what differs is where the database comes from."""

    engine = "csv"
    display_name = "CSV directory"
    source_type = "community"
    Details = CSVDetails
    features = DuckDBDriver.features - {"foreign-keys", "schemas"}

    @classmethod
    def check_details(cls, details: CSVDetails, policy: ConnectionPolicy) -> CSVDetails:
        real = check_file_path(details.directory, policy, "directory", directory=True)
        return details.model_copy(update={"directory": real})

    @classmethod
    def url(cls, details: CSVDetails) -> URL:
        return URL.create("duckdb")  # connections come from the snapshot's creator

    @classmethod
    def engine_options(cls, details: CSVDetails) -> dict:
        return {"creator": Snapshot(details.directory), "poolclass": SessionPerQuery}

    @classmethod
    def lockdown(cls, dbapi_connection, details) -> None:
        # The DuckDB driver's read-back (current_setting(), ~0.5 ms; duckdb_settings() cost ~7 ms).
        wrong = unlocked_settings(dbapi_connection)
        if wrong:
            raise LockdownError(f"CSV snapshot connection is not locked down ({', '.join(wrong)})")

    @classmethod
    def dbms_version(cls, engine: Engine) -> dict:
        return {**super().dbms_version(engine), "flavor": "DuckDB (CSV directory)"}

    @classmethod
    def syncable_schemas(cls, engine: Engine) -> list[str | None]:
        return [None]

    @classmethod
    def describe_tables(cls, engine: Engine) -> list[TableMeta]:
        rows = cls._catalog(engine, "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
                                    "AND schema_name = 'main' ORDER BY table_name")
        return [TableMeta(name=row[0]) for row in rows]

    @classmethod
    def describe_fields(cls, engine: Engine, table: TableMeta) -> list[FieldMeta]:
        rows = cls._catalog(engine, "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = "
                                    "current_database() AND schema_name = 'main' AND table_name = :t "
                                    "ORDER BY column_index", t=table.name)
        return [FieldMeta(name=name, database_type=kind, base_type=cls.base_type(kind), position=i)
                for i, (name, kind) in enumerate(rows)]

    @classmethod
    def describe_fks(cls, engine: Engine, table: TableMeta) -> list[FKMeta]:
        return []
