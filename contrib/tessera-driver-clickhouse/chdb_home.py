"""The one chDB directory of this test process (chDB opens a single directory per process), with
helpers to make a database in it and an unlocked SQLAlchemy engine to fill it."""
from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

_home: list[Path] = []


def chdb_home() -> Path:
    if not _home:
        root = Path(tempfile.mkdtemp(prefix="tessera-chdb-"))
        atexit.register(shutil.rmtree, root, True)
        (root / "chdb").mkdir()
        _home.append(root / "chdb")
    return _home[0]


def create_database(name: str) -> None:
    import chdb

    conn = chdb.connect(f"file:{chdb_home()}")
    try:
        conn.query(f"DROP DATABASE IF EXISTS `{name}`")
        conn.query(f"CREATE DATABASE `{name}`")
    finally:
        conn.close()


def admin_engine(database: str) -> sa.Engine:
    """Full rights on one database (no lockdown): for filling it."""
    import tessera_driver_clickhouse.sa  # noqa: F401 - registers the dialect
    from tessera_driver_clickhouse.embedded import EmbeddedConnection

    home = str(chdb_home())
    return sa.create_engine("tessera_clickhouse://", creator=lambda: EmbeddedConnection(home, database),
                            poolclass=NullPool)
