"""Login throttling with Metabase's semantics, counted in the app DB so every worker and instance shares it.

A `Throttler` names a kind of key (username, IP, reset e-mail) with Metabase's parameters: `threshold`
attempts within `ttl` seconds, then a wait of `delay_base * (attempts over threshold) ** exponent` after
the latest one. Two ways to use it, as Metabase's throttle library has:
- `attempt(engine, pairs)`, Metabase's `with-throttling` (logins): refused while any key has `threshold`
  failures within the TTL; a body that raises counts as a failure of every key, and so does a refusal; a
  success counts for none (and resets nothing).
- `Throttler.check(engine, key)`, Metabase's `check` (password-reset requests): every allowed call counts,
  refused while the wait is running.
- `Throttler.limit(engine, key)`, a rate limit (public action executions): at most `threshold` calls
  within `ttl` seconds, the next a 429 with Retry-After until the oldest of them leaves the window;
  refusals are not counted, so a client that keeps trying is let in as soon as the window has room.
Attempts are rows of `throttle_attempt`; every check-and-record transaction first updates the one
`throttle_guard` row, which serialises them across processes (a row lock on PostgreSQL, the write lock on
SQLite), so concurrent requests cannot all see the same count. A login's attempt is recorded before the
password is checked and deleted again when it succeeds, so that parallel guesses are counted while they
run. Rows older than the TTL are deleted on each write. The clock (wall time, as every process must agree
on it) is injectable so tests move time instead of sleeping.
"""
from __future__ import annotations

import contextlib
import hashlib
import math
import time
from typing import Callable, Iterator, Sequence

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.engine import Connection, Engine

from core.appdb.models import ThrottleAttempt, ThrottleGuard

from .errors import Invalid, TooManyRequests

GUARD = "throttle"


def wait_message(delay: float | None) -> str:
    if delay is None:
        return "Too many attempts! Please try again later."
    # Metabase rounds the wait to the nearest second (Math/round: halves up).
    return f"Too many attempts! You must wait {math.floor(delay + 0.5)} seconds before trying again."


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@contextlib.contextmanager
def guarded(engine: Engine) -> Iterator[Connection]:
    """A transaction that holds the throttling guard until it commits."""
    with engine.begin() as conn:
        conn.execute(update(ThrottleGuard).where(ThrottleGuard.name == GUARD)
                     .values(writes=ThrottleGuard.writes + 1))
        yield conn


class Throttler:
    def __init__(self, name: str, threshold: int = 10, ttl: float = 3600.0, delay_base: float = 15.0,
                 exponent: float = 1.5, field: str = "username", clock: Callable[[], float] = time.time):
        self.name = name
        self.threshold = threshold
        self.ttl = ttl
        self.delay_base = delay_base
        self.exponent = exponent
        self.field = field
        self.clock = clock

    def recent(self, conn: Connection, key: str, now: float) -> tuple[int, float | None]:
        """(attempts within the TTL, the latest one's time), after deleting this throttler's expired rows."""
        conn.execute(delete(ThrottleAttempt).where(ThrottleAttempt.throttler == self.name,
                                                   ThrottleAttempt.attempted_at <= now - self.ttl))
        count, latest = conn.execute(
            select(func.count(), func.max(ThrottleAttempt.attempted_at))
            .where(ThrottleAttempt.throttler == self.name, ThrottleAttempt.key == digest(key))).one()
        return count, latest

    def delay(self, count: int, latest: float | None, now: float) -> float | None:
        """Seconds still to wait before another attempt (one more than `count`), or None."""
        over = count + 1 - self.threshold
        if over <= 0 or latest is None:
            return None
        remaining = latest + self.delay_base * over**self.exponent - now
        return remaining if remaining > 0 else None

    def record(self, conn: Connection, key: str, now: float) -> int:
        result = conn.execute(insert(ThrottleAttempt).values(throttler=self.name, key=digest(key), attempted_at=now))
        return result.inserted_primary_key[0]

    def check(self, engine: Engine, key: str) -> None:
        """Metabase's `check`: refuse (400 naming `field`) while the wait runs, else count this call."""
        with guarded(engine) as conn:
            now = self.clock()
            wait = self.delay(*self.recent(conn, key, now), now)
            if wait is None:
                self.record(conn, key, now)
        if wait is not None:
            raise Invalid({self.field: wait_message(wait)})

    def limit(self, engine: Engine, key: str) -> None:
        """A rate limit: 429 with Retry-After (whole seconds) while `threshold` calls of `key` fall within
        the last `ttl` seconds, else count this call."""
        with guarded(engine) as conn:
            now = self.clock()
            count, _ = self.recent(conn, key, now)
            if count < self.threshold:
                self.record(conn, key, now)
                return
            oldest = conn.execute(select(func.min(ThrottleAttempt.attempted_at)).where(
                ThrottleAttempt.throttler == self.name, ThrottleAttempt.key == digest(key))).scalar_one()
        retry = max(1, math.ceil(oldest + self.ttl - now))
        raise TooManyRequests(headers={"Retry-After": str(retry)})


@contextlib.contextmanager
def attempt(engine: Engine, pairs: Sequence[tuple[Throttler, str]]) -> Iterator[None]:
    """Metabase's `with-throttling` over (throttler, key) pairs, checked in order (see module docstring)."""
    refusal = None
    with guarded(engine) as conn:
        ids = []
        for throttler, key in pairs:
            now = throttler.clock()
            count, latest = throttler.recent(conn, key, now)
            if refusal is None and count >= throttler.threshold:
                refusal = {throttler.field: wait_message(throttler.delay(count, latest, now))}
            ids.append(throttler.record(conn, key, now))
    if refusal is not None:
        raise Invalid(refusal)
    yield
    with engine.begin() as conn:
        conn.execute(delete(ThrottleAttempt).where(ThrottleAttempt.id.in_(ids)))
