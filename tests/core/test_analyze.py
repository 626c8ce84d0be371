"""Display names, fingerprints and the semantic types inferred from names and values."""
import datetime as dt

import pytest

from core.sync import analyze
from core.sync.humanize import humanize, is_generated
from core.sync.schedules import cron_to_schedule, schedule_to_cron


def test_humanize():
    assert humanize("customer_id") == "Customer ID"
    assert humanize("CREATED_AT") == "Created At"
    assert humanize("order-items  total") == "Order Items Total"
    assert humanize("id") == "ID"
    assert humanize("customer_id", "none") == "customer_id"
    assert is_generated("Customer ID", "customer_id") and is_generated("customer_id", "customer_id")
    assert not is_generated("Client", "customer_id")


def test_fingerprints():
    fp = analyze.fingerprint("type/Integer", [1, 2, 3, 4, None])
    assert fp["global"] == {"distinct-count": 4, "nil%": 0.2}
    number = fp["type"]["type/Number"]
    assert (number["min"], number["max"], number["avg"]) == (1, 4, 2.5)
    assert number["q1"] <= number["q3"] and number["sd"] > 0
    text = analyze.fingerprint("type/Text", ["a@b.com", "c@d.org", "http://x.io", '{"a": 1}'])["type"]["type/Text"]
    assert text["percent-email"] == 0.5 and text["percent-url"] == 0.25 and text["percent-json"] == 0.25
    assert text["average-length"] == sum(map(len, ["a@b.com", "c@d.org", "http://x.io", '{"a": 1}'])) / 4
    when = analyze.fingerprint("type/DateTime", ["2024-01-02 03:04:05", "2023-05-06 00:00:00", None])
    assert when["type"]["type/DateTime"] == {"earliest": "2023-05-06T00:00:00Z", "latest": "2024-01-02T03:04:05Z"}
    dates = analyze.fingerprint("type/Date", [dt.date(2020, 1, 1), dt.date(2019, 1, 1)])
    assert dates["type"]["type/DateTime"]["earliest"] == "2019-01-01"
    assert analyze.fingerprint("type/Integer", [])["global"] == {"distinct-count": 0, "nil%": 0.0}


def test_fingerprints_skip_non_finite_numbers():
    """SQLite stores inf and NaN floats; statistics are over the finite values, and stay JSON."""
    fp = analyze.fingerprint("type/Float", [1.0, float("inf"), 3.0, float("-inf"), float("nan"), 10**400])
    assert fp["global"]["distinct-count"] == 6
    number = fp["type"]["type/Number"]
    assert (number["min"], number["max"], number["avg"]) == (1.0, 3.0, 2.0)
    assert number["sd"] == pytest.approx(2 ** 0.5)
    only_inf = analyze.fingerprint("type/Float", [float("inf")])["type"]["type/Number"]
    assert only_inf == {"min": None, "max": None, "avg": None, "q1": None, "q3": None, "sd": None}


def test_semantic_types_from_names():
    cases = {
        ("id", "type/Integer"): "type/PK", ("longitude", "type/Float"): "type/Longitude",
        ("home_lat", "type/Float"): "type/Latitude", ("status", "type/Text"): "type/Category",
        ("homepage_url", "type/Text"): "type/URL", ("city", "type/Text"): "type/City",
        ("country_code", "type/Text"): "type/Country", ("first_name", "type/Text"): "type/Name",
        ("zip_code", "type/Text"): "type/ZipCode", ("discount", "type/Float"): "type/Discount",
        ("quantity", "type/Integer"): "type/Quantity", ("created_at", "type/DateTime"): "type/CreationTimestamp",
        ("created_on", "type/Date"): "type/CreationDate", ("updated_at", "type/DateTime"): "type/UpdatedTimestamp",
        ("birth_date", "type/Date"): "type/Birthdate", ("source", "type/Text"): "type/Source",
        ("vendor", "type/Text"): "type/Company", ("rating", "type/Float"): "type/Score",
        ("title", "type/Text"): "type/Title", ("description", "type/Text"): "type/Description",
    }
    for (name, base), expected in cases.items():
        assert analyze.semantic_type_from_name(name, base) == expected, name
    # base type matters: a text "longitude" is not a coordinate, a float "city" is not a city
    assert analyze.semantic_type_from_name("longitude", "type/Text") is None
    assert analyze.semantic_type_from_name("city", "type/Float") is None


def test_classify_from_values():
    def fp(base, values):
        return analyze.fingerprint(base, values)

    emails = [f"user{i}@example.com" for i in range(100)]
    assert analyze.classify("contact", "type/Text", None, None, fp("type/Text", emails))["semantic_type"] == "type/Email"
    codes = sorted(s for s in analyze.STATES if len(s) == 2)[:40]
    states = codes * 2 + [f"x{i}" for i in range(20)]  # 80% states, 60 distinct (too many for a category)
    assert analyze.classify("region", "type/Text", None, None, fp("type/Text", states))["semantic_type"] == "type/State"
    small = analyze.classify("kind", "type/Text", None, None, fp("type/Text", ["a", "b", "c"]))
    assert small == {"semantic_type": "type/Category", "has_field_values": "auto-list"}
    # a PK keeps its type and never becomes a list; floats and dates never become categories
    assert analyze.classify("id", "type/Integer", "type/PK", None, fp("type/Integer", [1, 2])) == {}
    assert "semantic_type" not in analyze.classify("price", "type/Float", None, None, fp("type/Float", [1.5, 2.5]))
    # an admin's choice of has_field_values is kept
    assert "has_field_values" not in analyze.classify("kind", "type/Text", None, "search", fp("type/Text", ["a"]))
    long_text = [f"{i} " + "word " * 20 for i in range(40)]
    assert analyze.classify("body", "type/Text", None, None, fp("type/Text", long_text))["preview_display"] is False
    assert analyze.entity_type("ORDERS") == "entity/TransactionTable"
    assert analyze.entity_type("people") == "entity/UserTable"
    assert analyze.entity_type("reviews") == "entity/GenericTable"


def test_schedules_round_trip():
    for schedule in ({"schedule_type": "hourly", "schedule_minute": 15},
                     {"schedule_type": "daily", "schedule_hour": 3, "schedule_minute": 0},
                     {"schedule_type": "weekly", "schedule_day": "tue", "schedule_hour": 4, "schedule_minute": 5},
                     {"schedule_type": "monthly", "schedule_frame": "last", "schedule_day": "fri", "schedule_hour": 1,
                      "schedule_minute": 0},
                     {"schedule_type": "monthly", "schedule_frame": "mid", "schedule_hour": 1, "schedule_minute": 0}):
        back = cron_to_schedule(schedule_to_cron(schedule))
        assert {k: v for k, v in back.items() if v is not None} == {k: v for k, v in schedule.items()}, schedule
    assert schedule_to_cron({"schedule_type": "daily", "schedule_hour": 3}) == "0 0 3 * * ? *"
