"""Login throttling with Metabase's semantics: per key, N attempts an hour, then growing waits.

State is per process, like Metabase's per-JVM throttlers. The clock is injectable so tests can move
time instead of sleeping.
"""
from __future__ import annotations

import math
import threading
import time
from collections import defaultdict
from typing import Callable

from .errors import Invalid


class Throttler:
    def __init__(self, threshold: int = 10, ttl: float = 3600.0, delay_base: float = 15.0,
                 clock: Callable[[], float] = time.monotonic):
        self.threshold = threshold
        self.ttl = ttl
        self.delay_base = delay_base
        self.clock = clock
        self._attempts: dict[str, list[float]] = defaultdict(list)
        self._lock = threading.Lock()

    def _recent(self, key: str, now: float) -> list[float]:
        attempts = [t for t in self._attempts.get(key, ()) if now - t < self.ttl]
        if attempts:
            self._attempts[key] = attempts
        else:
            self._attempts.pop(key, None)
        return attempts

    def seconds_to_wait(self, key: str) -> int:
        with self._lock:
            now = self.clock()
            attempts = self._recent(key, now)
            over = len(attempts) - self.threshold + 1
            if over <= 0:
                return 0
            remaining = attempts[-1] + self.delay_base * over**1.5 - now
            return max(0, math.ceil(remaining))

    def check(self, key: str, field: str = "username") -> None:
        wait = self.seconds_to_wait(key)
        if wait:
            raise Invalid({field: f"Too many attempts! You must wait {wait} seconds before trying again."})

    def failed(self, key: str) -> None:
        with self._lock:
            self._attempts[key].append(self.clock())

    def reset(self, key: str) -> None:
        with self._lock:
            self._attempts.pop(key, None)
