"""The public action execution limit (Metabase's: 10 a second per action, then 429 with Retry-After), counted
in the app DB by core.http.throttle so that it holds across gunicorn workers: two app instances on one
app DB share the count."""
import pytest

from core.assembly.app import create_app
from core.http.errors import TooManyRequests
from core.http.throttle import Throttler


class Clock:
    def __init__(self, now: float = 1_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def two_workers(app_config):
    apps = [create_app(app_config), create_app(app_config)]
    try:
        yield [a.extensions["tessera"].db.engine for a in apps]
    finally:
        for a in apps:
            a.extensions["tessera"].db.dispose()


def test_ten_a_second_across_workers(two_workers):
    clock = Clock()
    limiter = Throttler("public-action-execute", threshold=10, ttl=1.0, clock=clock)
    for i in range(10):
        clock.now += 0.05
        limiter.limit(two_workers[i % 2], "action:1")
    with pytest.raises(TooManyRequests) as refused:
        limiter.limit(two_workers[0], "action:1")
    assert refused.value.status == 429 and refused.value.headers == {"Retry-After": "1"}
    with pytest.raises(TooManyRequests):
        limiter.limit(two_workers[1], "action:1")
    limiter.limit(two_workers[1], "action:2")  # another action has its own count
    # Refusals are not counted: once the oldest call leaves the window there is room again.
    clock.now += 0.56
    limiter.limit(two_workers[0], "action:1")
    with pytest.raises(TooManyRequests):
        limiter.limit(two_workers[1], "action:1")
    clock.now += 1.0
    for _ in range(10):
        limiter.limit(two_workers[0], "action:1")
