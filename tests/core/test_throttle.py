"""Login throttling counted in the app DB: shared by app instances, exact under concurrency, Metabase's rules."""
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import func, select

from core.appdb.models import ThrottleAttempt
from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD, setup_admin


class FakeClock:
    def __init__(self):
        self.now = 1_000_000.0

    def __call__(self):
        return self.now


def second_instance(app):
    """Another app (as another worker or server would be) on the same app DB."""
    from core.assembly.app import create_app

    config = {key: value for key, value in app.config.items() if key.startswith("TESSERA_")}
    return create_app({**config, "TESSERA_RUN_MIGRATIONS": False})


def with_clock(clock, *apps):
    for app in apps:
        for throttler in app.extensions["tessera"].throttlers.values():
            throttler.clock = clock


def login(app, password=ADMIN_PASSWORD, username=ADMIN_EMAIL):
    return app.test_client().post("/api/session", json={"username": username, "password": password})


@pytest.fixture
def two_apps(any_app):
    setup_admin(any_app)
    other = second_instance(any_app)
    clock = FakeClock()
    with_clock(clock, any_app, other)
    yield any_app, other, clock
    other.extensions["tessera"].db.dispose()


def test_eleventh_failure_is_refused_by_whichever_instance_gets_it(two_apps):
    first, second, clock = two_apps
    for i in range(10):
        assert login((first, second)[i % 2], password="wrong-password-1").status_code == 401
    for app in (second, first):
        refused = login(app)
        assert refused.status_code == 400
        assert refused.json["errors"]["username"].startswith("Too many attempts! You must wait ")
    # Refusals count as failures (Metabase's with-throttling): the wait grows, 15 s x over^1.5 after the latest.
    assert login(first).json == {"errors": {"username": "Too many attempts! You must wait 78 seconds before trying again."}}
    clock.now += 121  # 13 attempts now: the next one's wait is 15 x 4^1.5 = 120 s
    # The wait is over, but ten failures are still within the hour: Metabase keeps refusing.
    assert login(second).json == {"errors": {"username": "Too many attempts! Please try again later."}}
    clock.now += 3601
    assert login(second).status_code == 200


def test_first_refusal_asks_for_fifteen_seconds(two_apps):
    first, second, clock = two_apps
    for _ in range(10):
        login(first, password="wrong-password-1")
    clock.now += 3
    assert login(second).json == {"errors": {"username": "Too many attempts! You must wait 12 seconds before trying again."}}


def test_concurrent_failures_on_two_instances_are_counted_exactly(two_apps):
    first, second, _ = two_apps
    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(lambda i: login((first, second)[i % 2], password="wrong-password-1").status_code,
                                 range(16)))
    assert sorted(statuses) == [400] * 6 + [401] * 10


def test_success_neither_counts_nor_resets(two_apps):
    first, second, _ = two_apps
    for _ in range(9):
        assert login(first, password="wrong-password-1").status_code == 401
    for _ in range(3):
        assert login(second).status_code == 200
    # Nine failures and three successes: the tenth failure is still let through (successes did not count)...
    assert login(first, password="wrong-password-1").status_code == 401
    # ...and the successes reset nothing: ten failures within the hour refuse even the right password.
    assert login(second).status_code == 400


def test_ip_threshold_is_fifty_across_instances(two_apps):
    first, second, _ = two_apps
    for i in range(50):
        assert login((first, second)[i % 2], username=f"user{i}@example.com", password="x").status_code == 401
    refused = login(first, username="someone-else@example.com", password="x")
    assert refused.status_code == 400 and "Too many attempts" in refused.json["errors"]["username"]


def test_expired_attempts_are_deleted_on_write(two_apps):
    first, _, clock = two_apps
    for _ in range(3):
        login(first, password="wrong-password-1")
    clock.now += 3601
    login(first, password="wrong-password-1")
    with first.extensions["tessera"].db.session() as session:
        # One row per throttler (IP and username) for the latest failure; the old ones are gone.
        assert session.scalar(select(func.count()).select_from(ThrottleAttempt)) == 2
        keys = session.scalars(select(ThrottleAttempt.key)).all()
    assert ADMIN_EMAIL not in keys and "127.0.0.1" not in keys


def test_disabled_throttle_records_nothing(any_app):
    from core.assembly.app import create_app

    setup_admin(any_app)
    config = {key: value for key, value in any_app.config.items() if key.startswith("TESSERA_")}
    app = create_app({**config, "TESSERA_RUN_MIGRATIONS": False, "TESSERA_DISABLE_SESSION_THROTTLE": True})
    try:
        for _ in range(12):
            assert login(app, password="wrong-password-1").status_code == 401
        assert login(app).status_code == 200
        with app.extensions["tessera"].db.session() as session:
            assert session.scalar(select(func.count()).select_from(ThrottleAttempt)) == 0
    finally:
        app.extensions["tessera"].db.dispose()
