"""What the HTTP bench tests ask of the servers a bench started and stopped."""
from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """Whether a process of that id still exists (a gunicorn master that outlived its bench)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
