"""JSON responses: timestamps in UTC with Z, decimals as numbers, integers beyond 64 bits."""
import datetime as dt
import decimal
import json

from core.http.api import dumps


def test_datetimes_are_utc_with_z():
    value = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    assert json.loads(dumps({"at": value})) == {"at": "2024-01-02T03:04:05Z"}


def test_decimals_become_numbers():
    assert json.loads(dumps([decimal.Decimal("1.50"), decimal.Decimal("3")])) == [1.5, 3]


def test_huge_integers_survive():
    value = {"n": 10**30, "at": dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)}
    assert json.loads(dumps(value)) == {"n": 10**30, "at": "2024-01-01T00:00:00Z"}


def test_huge_integer_setting_round_trips(admin):
    assert admin.put("/api/setting/site-name", json={"value": 10**30}).status_code == 204
    assert admin.get("/api/setting/site-name").json == str(10**30)
