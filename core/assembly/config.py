"""Configuration: built-in defaults overlaid by TESSERA_* environment variables and create_app(config).

A Config is a plain mapping of upper-case keys. Everything that reads configuration reads it from
app.config, so a test can hand create_app a dict and never touch the process environment.
"""
from __future__ import annotations

import os
from pathlib import Path

DEFAULTS: dict[str, object] = {
    "TESSERA_DATA_DIR": "./data",
    "TESSERA_DB_URL": None,  # None: a SQLite file tessera.db inside TESSERA_DATA_DIR
    "TESSERA_PLUGINS_DISABLED": "",
    "TESSERA_PLUGINS_EXTRA": "",
    "TESSERA_PLUGINS_AUTOLOAD": True,
    "TESSERA_DRIVERS_DISABLED": "",
    "TESSERA_MAX_SESSION_AGE": 20160,  # minutes, as Metabase's MAX_SESSION_AGE
    "TESSERA_DISABLE_SESSION_THROTTLE": False,
    "TESSERA_PASSWORD_COMPLEXITY": "normal",
    "TESSERA_PASSWORD_LENGTH": None,
    # argon2id cost; tests lower it through the environment so that hashing stays cheap there.
    "TESSERA_PASSWORD_HASH_TIME_COST": 3,
    "TESSERA_PASSWORD_HASH_MEMORY_KIB": 65536,
    "TESSERA_RUN_MIGRATIONS": True,
    "TESSERA_LOG_BUFFER": 2000,
    # Directories SQLite/DuckDB files may be registered from ("" means TESSERA_DATA_DIR/files).
    "TESSERA_FILE_DB_DIRS": "",
    # Key for connection details at rest; None: generated into TESSERA_DATA_DIR/encryption.key.
    "TESSERA_ENCRYPTION_KEY": None,
    # Run schema syncs in the request instead of a background thread (scripts that need the result).
    "TESSERA_SYNC_IN_FOREGROUND": False,
    # Register the Sample Database the first time the server starts (`tessera run` turns it on).
    "TESSERA_LOAD_SAMPLE_DATABASE": False,
    # Largest request body (JSON or form) in bytes; larger ones are a 413 before they are read.
    "TESSERA_MAX_BODY_BYTES": 10 * 1024 * 1024,
    # Scheduled jobs (core.schedule): "inprocess" runs them in the serving process (one scheduler per
    # instance, in gunicorn's master), "off" leaves them to `tessera worker` processes.
    "TESSERA_SCHEDULER": "inprocess",
    # How often a scheduler looks for due jobs (seconds); an occurrence runs at most this late.
    "TESSERA_SCHEDULER_POLL_SECONDS": 5,
    # How many scheduled runs one scheduler process runs at the same time.
    "TESSERA_SCHEDULER_THREADS": 4,
    # Seconds before a dead scheduler process is started again (core.schedule.supervisor); doubled at
    # each restart in a row, up to a minute.
    "TESSERA_SCHEDULER_RESTART_SECONDS": 1,
    # A scheduled subscription e-mail that meets a mail-server outage is tried this many times in all,
    # the first retry after this many seconds, each later one twice as late (plugins.subscriptions.retry).
    "TESSERA_MAIL_RETRY_ATTEMPTS": 7,
    "TESSERA_MAIL_RETRY_INITIAL_SECONDS": 0.5,
    # Query-execution rows older than this are removed by the nightly housekeeping job (Metabase: 720).
    "TESSERA_QUERY_EXECUTION_RETENTION_DAYS": 720,
    # Refuse embedding tokens without `exp` (Metabase accepts them; compat/security.md section 3).
    "TESSERA_EMBEDDING_REQUIRE_EXP": False,
}

BOOLEAN_KEYS = {"TESSERA_PLUGINS_AUTOLOAD", "TESSERA_DISABLE_SESSION_THROTTLE", "TESSERA_RUN_MIGRATIONS",
                "TESSERA_SYNC_IN_FOREGROUND", "TESSERA_LOAD_SAMPLE_DATABASE", "TESSERA_EMBEDDING_REQUIRE_EXP"}
INTEGER_KEYS = {
    "TESSERA_MAX_SESSION_AGE",
    "TESSERA_PASSWORD_LENGTH",
    "TESSERA_PASSWORD_HASH_TIME_COST",
    "TESSERA_PASSWORD_HASH_MEMORY_KIB",
    "TESSERA_LOG_BUFFER",
    "TESSERA_MAX_BODY_BYTES",
    "TESSERA_SCHEDULER_THREADS",
    "TESSERA_MAIL_RETRY_ATTEMPTS",
    "TESSERA_QUERY_EXECUTION_RETENTION_DAYS",
}


def parse_bool(value: object) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in {"1", "true", "yes", "on"}


def split_names(value: object) -> list[str]:
    """A comma- or space-separated list of names, as TESSERA_PLUGINS_DISABLED and friends are written."""
    if not value:
        return []
    if isinstance(value, (list, tuple, set)):
        return [str(v) for v in value]
    return [part for part in str(value).replace(",", " ").split() if part]


def load_config(overrides: dict | None = None, environ: dict | None = None) -> dict:
    """Defaults, then every TESSERA_* variable in the environment, then explicit overrides."""
    environ = os.environ if environ is None else environ
    config = dict(DEFAULTS)
    for key, value in environ.items():
        if key.startswith("TESSERA_"):
            config[key] = value
    config.update(overrides or {})
    for key in BOOLEAN_KEYS:
        config[key] = parse_bool(config[key])
    for key in INTEGER_KEYS:
        if config.get(key) not in (None, ""):
            config[key] = int(config[key])
    data_dir = Path(str(config["TESSERA_DATA_DIR"])).expanduser().resolve()
    config["TESSERA_DATA_DIR"] = str(data_dir)
    if not config.get("TESSERA_DB_URL"):
        config["TESSERA_DB_URL"] = f"sqlite:///{data_dir / 'tessera.db'}"
    return config
