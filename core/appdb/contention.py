"""SQLAlchemy's per-request counters without their lock.

SQLAlchemy numbers every Session it creates (`Session.hash_key`) and every ORM load (the run id of
`loading.instances`) from `util.counter()`, a function that takes a threading.Lock around
`next(itertools.count())`. Every request creates a Session, so every thread of a gthread worker takes
that lock once per request, and under the GIL a lock every thread takes convoys: a holder asked to
give up the GIL (every 5 ms while others wait for it) keeps the lock while the others run into it and
sleep, each wake-up needs the GIL again, and the queue never drains while the worker is busy.
Measured with 8 threads serving cached card queries in one process: nine tenths of the threads' time
waiting at this lock, and a fifth of the CPU in the kernel's futex calls.

`next()` of an itertools.count is one C call, atomic under the GIL: the same numbers, one at a time,
with no lock. `install()` puts such a counter in place of each lock-guarded one it recognises, starting
after the last number handed out, and leaves everything as it is on a free-threaded Python (no GIL to
make the call atomic) or when SQLAlchemy no longer has these counters (tests/core/test_contention.py
says which).
"""
from __future__ import annotations

import itertools
import sys

from sqlalchemy.orm import loading, session

# (module, attribute) of each counter a request reaches.
COUNTERS = ((session, "_new_sessionid"), (loading, "_new_runid"))


def _gil_enabled() -> bool:
    check = getattr(sys, "_is_gil_enabled", None)
    return True if check is None else check()


def _guarded(counter) -> bool:
    """Whether `counter` is util.counter()'s locked function (a closure over a lock and a count)."""
    cells = getattr(counter, "__closure__", None) or ()
    kinds = {type(cell.cell_contents).__name__ for cell in cells}
    return getattr(counter, "__name__", None) == "_next" and {"count", "lock"} <= kinds


def install() -> list[str]:
    """Replace the lock-guarded counters; the names replaced (none on a free-threaded Python)."""
    if not _gil_enabled():
        return []
    replaced = []
    for module, name in COUNTERS:
        counter = getattr(module, name, None)
        if counter is None or not _guarded(counter):
            continue
        setattr(module, name, itertools.count(counter() + 1).__next__)
        replaced.append(f"{module.__name__}.{name}")
    return replaced
