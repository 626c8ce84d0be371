"""Makes this distribution importable when Tessera's `make test` runs it from a source checkout."""
import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
