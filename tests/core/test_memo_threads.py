"""core.appdb.memo.Memo looked up from many threads: a lookup takes no lock another thread may hold (with
one, the threads of a busy worker queued behind a holder that had lost the GIL), answers stay exact,
and the least recently used entry is still the one dropped when nothing contends."""
from __future__ import annotations

import random
import threading

from core.appdb.changes import Snapshot
from core.appdb.memo import MISSING, Memo


def test_a_lookup_is_answered_while_another_thread_holds_the_lock():
    memo = Memo()
    counters = Snapshot([("card", 1)])
    memo.put(counters, "key", "value", ["card"])
    answers = []
    with memo._lock:  # as a thread putting an answer, or one that lost the GIL inside the lock
        reader = threading.Thread(target=lambda: answers.append(memo.get(counters, "key")))
        reader.start()
        reader.join(5)
        assert not reader.is_alive()
    assert answers == [("value", frozenset({"*", "card"}))]


def test_the_least_recently_used_entry_is_dropped():
    memo = Memo(size=2)
    counters = Snapshot([])
    memo.put(counters, "a", 1, [])
    memo.put(counters, "b", 2, [])
    assert memo.get(counters, "a")[0] == 1
    memo.put(counters, "c", 3, [])
    assert memo.get(counters, "b") is MISSING
    assert memo.get(counters, "a")[0] == 1 and memo.get(counters, "c")[0] == 3


def test_lookups_and_puts_from_many_threads_answer_only_what_is_current():
    memo = Memo(size=50)
    old, new = Snapshot([("card", 1)]), Snapshot([("card", 2)])
    errors = []

    def work(seed: int) -> None:
        rng = random.Random(seed)
        try:
            for _ in range(5000):
                key = rng.randrange(80)
                counters = rng.choice((old, new))
                found = memo.get(counters, key)
                if found is MISSING:
                    memo.put(counters, key, (key, counters["card"]), ["card"])
                elif found[0] != (key, counters["card"]):
                    errors.append((key, found[0], counters["card"]))
        except Exception as exc:  # a lookup racing a put or an eviction must never fail
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(memo._entries) <= 50
