"""Tessera plugin entry point: registers the Spark SQL (Spark Connect) driver, engine `sparksql`, and
the migration that renames databases stored under its first engine name, `spark`."""
from pathlib import Path

from core import Migrations, hookimpl

__version__ = "0.1.0"


@hookimpl
def register_migrations():
    return [Migrations("sparksql", Path(__file__).parent / "migrations")]


@hookimpl
def register_drivers():
    from .driver import SparkDriver

    return [SparkDriver]
