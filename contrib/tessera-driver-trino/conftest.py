"""Makes this distribution importable when Tessera's `make test` runs it from a source checkout, and
brings core.testing's migrated app DB (a session fixture) to its MBQL tests."""
import sys
from pathlib import Path

from core.testing.app import app_db_template  # noqa: F401 - a fixture, for pytest to find here

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
