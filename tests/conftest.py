import sys
from pathlib import Path

pytest_plugins = ["core.testing"]

# tests/support.py holds helpers shared by test modules (importlib import mode has no package path).
sys.path.insert(0, str(Path(__file__).parent))
