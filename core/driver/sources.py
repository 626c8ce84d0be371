"""Which data sources the server lets a driver reach, from configuration: the directories files may
be registered from, and the app database's own file, which is never a source.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from core.http.errors import Invalid


@dataclass(frozen=True)
class ConnectionPolicy:
    """What the server allows data connections to reach, from configuration."""

    file_dirs: tuple[Path, ...] = ()
    app_db_url: str | None = None
    forbidden_files: tuple[Path, ...] = ()
    extras: dict = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: dict) -> "ConnectionPolicy":
        from core.appdb.db import database_file
        from core.assembly.config import split_names

        data_dir = Path(config["TESSERA_DATA_DIR"])
        dirs = split_names(config.get("TESSERA_FILE_DB_DIRS")) or [str(data_dir / "files")]
        # The Sample Database (core.sync.sample_data) is generated there; it is always readable.
        dirs = [*dirs, str(data_dir / "sample")]
        app_url = config.get("TESSERA_DB_URL")
        forbidden = [data_dir / "tessera.db", data_dir / "encryption.key"]
        app_file = database_file(app_url) if app_url else None
        if app_file is not None:
            forbidden.append(app_file)
        return cls(file_dirs=tuple(Path(os.path.realpath(d)) for d in dirs), app_db_url=app_url,
                   forbidden_files=tuple(forbidden))


def check_file_path(raw: str, policy: ConnectionPolicy, key: str = "db", *, directory: bool = False) -> str:
    """The real path of a database file the policy allows, or Invalid naming `key`.

    Every check runs before anything opens the file, so an error never tells whether a path outside
    the allowed directories exists (SQLite's "not a database" would).
    """
    def refuse(why: str) -> Invalid:
        return Invalid({key: why}, message=why)

    if not raw or raw.startswith("file:") or "?" in raw or "\x00" in raw:
        raise refuse("Give the path of a database file, not a URI.")
    real = Path(os.path.realpath(raw))
    if not any(real.is_relative_to(d) for d in policy.file_dirs):
        allowed = ", ".join(str(d) for d in policy.file_dirs) or "none configured"
        raise refuse(f"Database files must be inside the directories in TESSERA_FILE_DB_DIRS ({allowed}).")
    if directory and not real.is_dir():
        raise refuse(f"No directory at {raw}.")
    if not directory and not real.is_file():
        raise refuse(f"No database file at {raw}.")
    for other in policy.forbidden_files:
        for candidate in (other, Path(f"{other}-wal"), Path(f"{other}-shm"), Path(f"{other}-journal")):
            if candidate.exists() and os.path.samefile(real, candidate):
                raise refuse("The Tessera application database cannot be added as a data source.")
    return str(real)
