"""Cross-engine MBQL conformance: one table of queries over the sample data, each compiled for and
run on SQLite, DuckDB, PostgreSQL and MariaDB, with identical (normalised) answers required.

Some rows also carry an answer computed in Python from the generated rows, so agreement is not
agreement on a shared mistake. A row that needs a driver feature (percentile, full join) runs on
the engines declaring it; the others must refuse it with a 400 naming the feature.
"""
from __future__ import annotations

import datetime as dt
import math
import re
from collections import Counter
from decimal import Decimal

import pytest

from core.http.errors import Invalid
from core.query import temporal
from core.query.compiler import compile_query
from core.query.mbql import normalize

from . import sample
from .conftest import ENGINES

# One xdist worker runs this module (make test: --dist loadgroup): the four-engine sample is synced once.
pytestmark = pytest.mark.xdist_group("query-conformance")

R = sample.ROWS
ORDERS, PRODUCTS, PEOPLE = "$$ORDERS", "$$PRODUCTS", "$$PEOPLE"


def f(ref: str, **opts):
    """A field ref template: f("ORDERS.TOTAL", temporal_unit="month")."""
    return ["field", f"${ref}", {k.replace("_", "-"): v for k, v in opts.items()} or None]


def fk(ref: str, via: str, **opts):
    return ["field", f"${ref}", {"source-field": f"${via}", **{k.replace("_", "-"): v for k, v in opts.items()}}]


def months_between(start: dt.datetime, end: dt.datetime) -> int:
    """Metabase's calendar month difference (PostgreSQL's age()), written independently of the compiler."""
    sign = 1 if end.date() >= start.date() else -1
    a, b = (start, end) if sign > 0 else (end, start)
    months = (b.year - a.year) * 12 + b.month - a.month - (1 if b.day < a.day else 0)
    return sign * months


def trunc(x: float) -> int:
    return int(x)  # toward zero


def count_by(values) -> list[tuple]:
    """(value, count) pairs in SQL's ascending order, NULL first."""
    return sorted(Counter(values).items(), key=lambda kv: (kv[0] is not None, kv[0]))


def orders_where(pred) -> int:
    return sum(1 for o in R["ORDERS"] if pred(o))


PRODUCT = {p["ID"]: p for p in R["PRODUCTS"]}
PEOPLE_BY_ID = {p["ID"]: p for p in R["PEOPLE"]}


def email_host(email: str) -> str:
    """The part after '@' (the sample's mail domains have no subdomains)."""
    return email.split("@")[1]


def piece(text, delimiter: str, position: int):
    """Metabase's split-part, written independently: '' past the end or below 1, NULL for NULL text."""
    if text is None:
        return None
    pieces = text.split(delimiter)
    return pieces[position - 1] if 1 <= position <= len(pieces) else ""


def shifted_rows(keys: list, rows_of) -> list[tuple]:
    """(key, sum of quantity, previous sum, count two keys later, sum minus previous) for each key in order."""
    sums = [sum(o["QUANTITY"] for o in rows_of(k)) for k in keys]
    counts = [len(rows_of(k)) for k in keys]
    return [(k, sums[i], sums[i - 1] if i else None, counts[i + 2] if i + 2 < len(keys) else None,
             sums[i] - sums[i - 1] if i else None) for i, k in enumerate(keys)]


def per_category_years(category: str) -> list[tuple]:
    """(year, orders of the category that year, the count of its previous year with orders) for one category."""
    counts = Counter(o["CREATED_AT"].year for o in R["ORDERS"] if PRODUCT[o["PRODUCT_ID"]]["CATEGORY"] == category)
    years = sorted(counts)
    return [(dt.datetime(y, 1, 1), counts[y], counts[years[i - 1]] if i else None) for i, y in enumerate(years)]


def category_of(o) -> str:
    return PRODUCT[o["PRODUCT_ID"]]["CATEGORY"]


def year_of(o) -> dt.datetime:
    return dt.datetime(o["CREATED_AT"].year, 1, 1)


def quarter_of(o) -> dt.datetime:
    return dt.datetime(o["CREATED_AT"].year, 3 * ((o["CREATED_AT"].month - 1) // 3) + 1, 1)


def running(groups: dict, partition, order_key, values) -> list[tuple]:
    """Rows of (group key..., values..., running totals of those values): groups visited by `order_key`,
    totals restarting whenever `partition(key)` changes. Written independently of the compiler's windows."""
    rows, totals, current = [], None, object()
    for key in sorted(groups, key=order_key):
        if partition(key) != current:
            current, totals = partition(key), [0] * len(values)
        own = [value(groups[key]) for value in values]
        totals = [t + v for t, v in zip(totals, own)]
        rows.append((*key, *own, *totals))
    return rows


def first_day_of_week(value, week_start: int) -> dt.datetime:
    """Midnight of the last day on or before value that is `week_start` (a Python weekday), found by
    stepping back a day at a time rather than with the compiler's arithmetic."""
    day = dt.datetime(value.year, value.month, value.day)
    while day.weekday() != week_start:
        day -= dt.timedelta(days=1)
    return day


def day_number(value, week_start: int) -> int:
    """Metabase's day-of-week: 1 on the week's first day .. 7."""
    return (dt.datetime(value.year, value.month, value.day) - first_day_of_week(value, week_start)).days + 1


def weeks_from_january(value, week_start: int) -> int:
    """Metabase's US/instance week number: January 1st is in week 1 and every `week_start` day after it
    starts the next week."""
    january_first = dt.date(value.year, 1, 1)
    days = (dt.date(value.year, value.month, value.day) - january_first).days
    return 1 + sum(1 for k in range(1, days + 1) if (january_first + dt.timedelta(days=k)).weekday() == week_start)


def grouped(key) -> dict:
    groups: dict = {}
    for o in R["ORDERS"]:
        groups.setdefault(key(o), []).append(o)
    return groups


def quantity(rows) -> int:
    return sum(o["QUANTITY"] for o in rows)


BY_CATEGORY = grouped(lambda o: (category_of(o),))
# the quantity order differs from the name order, so a running total that ignored the sort would show
assert sorted(BY_CATEGORY, key=lambda k: -quantity(BY_CATEGORY[k])) != sorted(BY_CATEGORY)


# categories by order count, most first (ties by name, the implicit breakout order)
CATEGORY_COUNTS = sorted(Counter(PRODUCT[o["PRODUCT_ID"]]["CATEGORY"] for o in R["ORDERS"]).items(),
                         key=lambda kv: (-kv[1], kv[0]))


# URL -> (host, domain, subdomain, path) as Metabase's regexes answer them (metabase.lib.filter.desugar.jvm).
URL_PARTS = {
    "https://cdbaby.com/some.txt": ("cdbaby.com", "cdbaby", None, "/some.txt"),
    "https://www.geocities.jp/some/path/Turbitt?search=foo": ("geocities.jp", "geocities", None, "/some/path/Turbitt"),
    "http://www.bbc.co.uk/news": ("bbc.co.uk", "bbc", None, "/news"),
    "someone@email.mycompany.net": ("mycompany.net", "mycompany", "someone@email", None),
    "https://sub.example.com:8080/a/b?c#d": ("example.com", "example", "sub", "/a/b"),
    "http://a.b.c.d.example.co.uk/x": ("example.co.uk", "example", "a", "/x"),
    "www.metabase.com": ("metabase.com", "metabase", None, None),
    "mailto:someone@sub.mycompany.net": ("mycompany.net", "mycompany", "sub", None),
    "http://WWW.Example.COM/Path": ("Example.COM", "Example", "WWW", "/Path"),
    "https://dev.api.metabase.com/docs#x": ("metabase.com", "metabase", "dev", "/docs"),
    "ftp://user@files.example.org/pub": ("example.org", "example", "user@files", "/pub"),
    "localhost": (None, None, None, None),
    "": (None, None, None, None),
}
URLS = list(URL_PARTS)
# (text, delimiter, position, Metabase's answer) from Metabase's split-part tests
SPLITS = [("ABC-123", "-", 1, "ABC"), ("ABC-123", "-", 2, "123"), ("ABC-123", "-", 3, ""), ("John Doe", " ", 1, "John"),
          ("/ABC/123/", "/", 1, ""), ("/ABC/123/", "/", 2, "ABC"), ("/ABC/123/", "/", 4, ""), ("/ABC/123/", "/", 9, ""),
          ("ABC-123", ",", 1, "ABC-123"), ("ABC-123", "ABC-123", 1, ""), ("ABC-123", "ABC-123", 2, ""),
          ("ABC-123", "ABC-1235", 1, "ABC-123"), ("a--b--c", "--", 3, "c"), ("ab%cd_ef", "%", 2, "cd_ef")]

# (id, inner query, ordered?, features, expected rows or None)
CASES = [
    ("rows", {"source-table": ORDERS, "order-by": [["asc", f("ORDERS.ID")]], "limit": 5}, True, (), None),
    ("fields", {"source-table": ORDERS, "fields": [f("ORDERS.ID"), f("ORDERS.TOTAL"), f("ORDERS.CREATED_AT")],
                "order-by": [["desc", f("ORDERS.TOTAL")], ["asc", f("ORDERS.ID")]], "limit": 10}, True, (), None),
    ("page", {"source-table": ORDERS, "fields": [f("ORDERS.ID")], "order-by": [["asc", f("ORDERS.ID")]],
              "page": {"page": 3, "items": 7}}, True, (), [(o["ID"],) for o in sorted(R["ORDERS"], key=lambda o: o["ID"])[14:21]]),
    ("count", {"source-table": ORDERS, "aggregation": [["count"]]}, True, (), [(len(R["ORDERS"]),)]),
    ("basic-aggregations", {"source-table": ORDERS, "aggregation": [
        ["sum", f("ORDERS.QUANTITY")], ["avg", f("ORDERS.TOTAL")], ["min", f("ORDERS.TOTAL")],
        ["max", f("ORDERS.CREATED_AT")], ["distinct", f("ORDERS.USER_ID")], ["count", f("ORDERS.DISCOUNT")]]},
     True, (), [(sum(o["QUANTITY"] for o in R["ORDERS"]), sum(o["TOTAL"] for o in R["ORDERS"]) / len(R["ORDERS"]),
                 min(o["TOTAL"] for o in R["ORDERS"]), max(o["CREATED_AT"] for o in R["ORDERS"]),
                 len({o["USER_ID"] for o in R["ORDERS"]}), orders_where(lambda o: o["DISCOUNT"] is not None))]),
    ("average-of-integers", {"source-table": ORDERS, "aggregation": [["avg", f("ORDERS.QUANTITY")]],
                             "breakout": [f("ORDERS.USER_ID")]}, True, (), None),
    ("implicit-join-breakout", {"source-table": ORDERS, "aggregation": [["count"]],
                                "breakout": [fk("PRODUCTS.CATEGORY", "ORDERS.PRODUCT_ID")]}, True, (),
     count_by(PRODUCT[o["PRODUCT_ID"]]["CATEGORY"] for o in R["ORDERS"])),
    ("order-by-aggregation", {"source-table": ORDERS, "aggregation": [["sum", f("ORDERS.TOTAL")]],
                              "breakout": [f("ORDERS.USER_ID")],
                              "order-by": [["desc", ["aggregation", 0]]], "limit": 3}, True, (), None),
    *[(f"breakout-{unit}", {"source-table": ORDERS, "aggregation": [["count"]],
                            "breakout": [f("ORDERS.CREATED_AT", temporal_unit=unit)]}, True, (),
       count_by(temporal.truncate(o["CREATED_AT"], unit) for o in R["ORDERS"]))
      for unit in ("minute", "hour", "day", "week", "month", "quarter", "year")],
    ("breakout-minute-of-hour", {"source-table": ORDERS, "aggregation": [["count"]],
                                 "breakout": [f("ORDERS.CREATED_AT", temporal_unit="minute-of-hour")]}, True, (),
     count_by(o["CREATED_AT"].minute for o in R["ORDERS"])),
    ("breakout-hour-of-day", {"source-table": ORDERS, "aggregation": [["count"]],
                              "breakout": [f("ORDERS.CREATED_AT", temporal_unit="hour-of-day")]}, True, (),
     count_by(o["CREATED_AT"].hour for o in R["ORDERS"])),
    ("breakout-day-of-week", {"source-table": ORDERS, "aggregation": [["count"]],
                              "breakout": [f("ORDERS.CREATED_AT", temporal_unit="day-of-week")]}, True, (),
     count_by((o["CREATED_AT"].weekday() + 1) % 7 + 1 for o in R["ORDERS"])),
    ("breakout-day-of-month", {"source-table": ORDERS, "aggregation": [["count"]],
                               "breakout": [f("ORDERS.CREATED_AT", temporal_unit="day-of-month")]}, True, (),
     count_by(o["CREATED_AT"].day for o in R["ORDERS"])),
    ("breakout-day-of-year", {"source-table": ORDERS, "aggregation": [["count"]],
                              "breakout": [f("ORDERS.CREATED_AT", temporal_unit="day-of-year")]}, True, (),
     count_by(o["CREATED_AT"].timetuple().tm_yday for o in R["ORDERS"])),
    ("breakout-week-of-year", {"source-table": ORDERS, "aggregation": [["count"]],
                               "breakout": [f("ORDERS.CREATED_AT", temporal_unit="week-of-year")]}, True, (),
     count_by(math.ceil(temporal.truncate(o["CREATED_AT"], "week").timetuple().tm_yday / 7) for o in R["ORDERS"])),
    # Instance weeks (the default Sunday start here) count from January 1st, as Metabase's week-of-year-instance.
    ("iso-and-instance-weeks", {"source-table": ORDERS, "expressions": {
        "iso": ["get-week", f("ORDERS.CREATED_AT")], "instance": ["temporal-extract", f("ORDERS.CREATED_AT"), "week-of-year-instance"]},
        "fields": [f("ORDERS.ID"), ["expression", "iso"], ["expression", "instance"]], "order-by": [["asc", f("ORDERS.ID")]]},
     True, (), [(o["ID"], o["CREATED_AT"].isocalendar()[1], weeks_from_january(o["CREATED_AT"], 6)) for o in R["ORDERS"]]),
    ("breakout-month-of-year", {"source-table": ORDERS, "aggregation": [["count"]],
                                "breakout": [f("ORDERS.CREATED_AT", temporal_unit="month-of-year")]}, True, (),
     count_by(o["CREATED_AT"].month for o in R["ORDERS"])),
    ("breakout-quarter-of-year", {"source-table": ORDERS, "aggregation": [["count"]],
                                  "breakout": [f("ORDERS.CREATED_AT", temporal_unit="quarter-of-year")]}, True, (),
     count_by((o["CREATED_AT"].month + 2) // 3 for o in R["ORDERS"])),
    *[(f"date-breakout-{unit}", {"source-table": PEOPLE, "aggregation": [["count"]],
                                 "breakout": [f("PEOPLE.BIRTH_DATE", temporal_unit=unit)]}, True, (),
       count_by(temporal.truncate(p["BIRTH_DATE"], unit) for p in R["PEOPLE"]))
      for unit in ("week", "month", "year")],
    ("binning-num-bins", {"source-table": ORDERS, "aggregation": [["count"]],
                          "breakout": [f("ORDERS.TOTAL", binning={"strategy": "num-bins", "num-bins": 10})]},
     True, (), None),
    ("binning-bin-width", {"source-table": PRODUCTS, "aggregation": [["count"]],
                           "breakout": [f("PRODUCTS.PRICE", binning={"strategy": "bin-width", "bin-width": 20})]},
     True, (), count_by(math.floor(p["PRICE"] / 20) * 20 for p in R["PRODUCTS"])),
    ("binning-default", {"source-table": ORDERS, "aggregation": [["count"]],
                         "breakout": [f("ORDERS.QUANTITY", binning={"strategy": "default"})]}, True, (), None),
    ("binning-coordinates", {"source-table": PEOPLE, "aggregation": [["count"]],
                             "breakout": [f("PEOPLE.LATITUDE", binning={"strategy": "default"})]}, True, (),
     count_by(math.floor(p["LATITUDE"] / 10) * 10 for p in R["PEOPLE"])),
    # A nullable column: the NULL rows form their own bin (SQLite once raised in its FLOOR on them).
    ("binning-nullable", {"source-table": ORDERS, "aggregation": [["count"]],
                          "breakout": [f("ORDERS.DISCOUNT", binning={"strategy": "bin-width", "bin-width": 2})]},
     True, (), count_by(None if o["DISCOUNT"] is None else math.floor(o["DISCOUNT"] / 2) * 2 for o in R["ORDERS"])),
    # ---- filters ----
    ("filter-equals", {"source-table": ORDERS, "aggregation": [["count"]],
                       "filter": ["=", f("ORDERS.QUANTITY"), 2]}, True, (), [(orders_where(lambda o: o["QUANTITY"] == 2),)]),
    ("filter-in", {"source-table": ORDERS, "aggregation": [["count"]],
                   "filter": ["=", f("ORDERS.QUANTITY"), 1, 3, 5]}, True, (),
     [(orders_where(lambda o: o["QUANTITY"] in (1, 3, 5)),)]),
    ("filter-not-equal-keeps-nulls", {"source-table": PEOPLE, "aggregation": [["count"]],
                                      "filter": ["!=", f("PEOPLE.SOURCE"), "Google", "Twitter"]}, True, (),
     [(sum(1 for p in R["PEOPLE"] if p["SOURCE"] not in ("Google", "Twitter")),)]),
    ("filter-comparisons", {"source-table": ORDERS, "aggregation": [["count"]], "filter": [
        "and", [">", f("ORDERS.TOTAL"), 50], ["<=", f("ORDERS.TOTAL"), 200], [">=", f("ORDERS.QUANTITY"), 2],
        ["<", f("ORDERS.TAX"), 15]]}, True, (),
     [(orders_where(lambda o: 50 < o["TOTAL"] <= 200 and o["QUANTITY"] >= 2 and o["TAX"] < 15),)]),
    ("filter-between", {"source-table": ORDERS, "fields": [f("ORDERS.ID")], "order-by": [["asc", f("ORDERS.ID")]],
                        "filter": ["between", f("ORDERS.SUBTOTAL"), 40, 60]}, True, (),
     [(o["ID"],) for o in R["ORDERS"] if 40 <= o["SUBTOTAL"] <= 60]),
    ("filter-null", {"source-table": ORDERS, "aggregation": [["count"], ["sum", f("ORDERS.TOTAL")]],
                     "filter": ["is-null", f("ORDERS.DISCOUNT")]}, True, (), None),
    ("filter-not-null-or", {"source-table": ORDERS, "aggregation": [["count"]],
                            "filter": ["or", ["not-null", f("ORDERS.DISCOUNT")], ["=", f("ORDERS.QUANTITY"), 4]]},
     True, (), [(orders_where(lambda o: o["DISCOUNT"] is not None or o["QUANTITY"] == 4),)]),
    ("filter-empty", {"source-table": PEOPLE, "aggregation": [["count"]], "filter": ["is-empty", f("PEOPLE.SOURCE")]},
     True, (), [(sum(1 for p in R["PEOPLE"] if not p["SOURCE"]),)]),
    ("filter-not-empty", {"source-table": PEOPLE, "aggregation": [["count"]],
                          "filter": ["not-empty", f("PEOPLE.SOURCE")]}, True, (),
     [(sum(1 for p in R["PEOPLE"] if p["SOURCE"]),)]),
    ("filter-not", {"source-table": PRODUCTS, "aggregation": [["count"]],
                    "filter": ["not", ["=", f("PRODUCTS.CATEGORY"), "Gizmo"]]}, True, (),
     [(sum(1 for p in R["PRODUCTS"] if p["CATEGORY"] != "Gizmo"),)]),
    ("filter-contains-sensitive", {"source-table": PEOPLE, "aggregation": [["count"]],
                                   "filter": ["contains", f("PEOPLE.EMAIL"), "Mail"]}, True, (),
     [(sum(1 for p in R["PEOPLE"] if "Mail" in p["EMAIL"]),)]),
    ("filter-contains-insensitive", {"source-table": PEOPLE, "aggregation": [["count"]],
                                     "filter": ["contains", f("PEOPLE.EMAIL"), "MAIL", {"case-sensitive": False}]},
     True, (), [(sum(1 for p in R["PEOPLE"] if "mail" in p["EMAIL"].lower()),)]),
    ("filter-does-not-contain", {"source-table": PEOPLE, "aggregation": [["count"]],
                                 "filter": ["does-not-contain", f("PEOPLE.NAME"), "Kim"]}, True, (),
     [(sum(1 for p in R["PEOPLE"] if "Kim" not in p["NAME"]),)]),
    ("filter-starts-with-sensitive", {"source-table": PEOPLE, "aggregation": [["count"]],
                                      "filter": ["starts-with", f("PEOPLE.NAME"), "ed"]}, True, (),
     [(sum(1 for p in R["PEOPLE"] if p["NAME"].startswith("ed")),)]),
    ("filter-ends-with-insensitive", {"source-table": PEOPLE, "aggregation": [["count"]],
                                      "filter": ["ends-with", f("PEOPLE.NAME"), "LEE", {"case-sensitive": False}]},
     True, (), [(sum(1 for p in R["PEOPLE"] if p["NAME"].lower().endswith("lee")),)]),
    ("filter-wildcards-are-literal", {"source-table": PRODUCTS, "aggregation": [["count"]], "filter": [
        "or", ["contains", f("PRODUCTS.VENDOR"), "100%"], ["contains", f("PRODUCTS.VENDOR"), "c_K"],
        ["starts-with", f("PRODUCTS.VENDOR"), "O'H"], ["contains", f("PRODUCTS.VENDOR"), "%"]]}, True, (),
     [(sum(1 for p in R["PRODUCTS"] if "100%" in p["VENDOR"] or "c_K" in p["VENDOR"] or p["VENDOR"].startswith("O'H")
           or "%" in p["VENDOR"]),)]),
    ("filter-underscore-not-wildcard", {"source-table": PRODUCTS, "aggregation": [["count"]],
                                        "filter": ["contains", f("PRODUCTS.VENDOR"), "a_k"]}, True, (),
     [(sum(1 for p in R["PRODUCTS"] if "a_k" in p["VENDOR"]),)]),
    ("colon-literals", {"source-table": PEOPLE, "expressions": {"tagged": ["concat", f("PEOPLE.STATE"), " :tag"]},
                        "fields": [f("PEOPLE.ID"), ["expression", "tagged"]],
                        "filter": ["!=", f("PEOPLE.NAME"), "x :y"], "order-by": [["asc", f("PEOPLE.ID")]]}, True, (),
     [(p["ID"], f"{p['STATE']} :tag") for p in R["PEOPLE"]]),
    ("filter-inside", {"source-table": PEOPLE, "aggregation": [["count"]],
                       "filter": ["inside", f("PEOPLE.LATITUDE"), f("PEOPLE.LONGITUDE"), 40, -120, 30, -80]}, True, (),
     [(sum(1 for p in R["PEOPLE"] if 30 <= p["LATITUDE"] <= 40 and -120 <= p["LONGITUDE"] <= -80),)]),
    # ---- temporal filters ----
    ("filter-date-equals-day", {"source-table": ORDERS, "aggregation": [["count"]],
                                "filter": ["=", f("ORDERS.CREATED_AT"), sample.ROWS["ORDERS"][5]["CREATED_AT"].date().isoformat()]},
     True, (), [(orders_where(lambda o: o["CREATED_AT"].date() == R["ORDERS"][5]["CREATED_AT"].date()),)]),
    ("filter-month-bucket", {"source-table": ORDERS, "aggregation": [["count"]],
                             "filter": ["=", f("ORDERS.CREATED_AT", temporal_unit="month"), "2024-03-01"]}, True, (),
     [(orders_where(lambda o: (o["CREATED_AT"].year, o["CREATED_AT"].month) == (2024, 3)),)]),
    ("filter-date-between", {"source-table": ORDERS, "aggregation": [["count"]],
                             "filter": ["between", f("ORDERS.CREATED_AT"), "2024-01-01", "2024-06-30"]}, True, (),
     [(orders_where(lambda o: dt.datetime(2024, 1, 1) <= o["CREATED_AT"] < dt.datetime(2024, 7, 1)),)]),
    ("filter-datetime-after", {"source-table": ORDERS, "aggregation": [["count"]],
                               "filter": [">", f("ORDERS.CREATED_AT"), "2024-10-05T12:30:00"]}, True, (),
     [(orders_where(lambda o: o["CREATED_AT"] > dt.datetime(2024, 10, 5, 12, 30)),)]),
    ("filter-date-column-before", {"source-table": PEOPLE, "aggregation": [["count"]],
                                   "filter": ["<", f("PEOPLE.BIRTH_DATE"), "1980-01-01"]}, True, (),
     [(sum(1 for p in R["PEOPLE"] if p["BIRTH_DATE"] < dt.date(1980, 1, 1)),)]),
    ("time-interval-last-30-days", {"source-table": ORDERS, "aggregation": [["count"]],
                                    "filter": ["time-interval", f("ORDERS.CREATED_AT"), -30, "day"]}, True, (),
     [(orders_where(lambda o: dt.datetime(2025, 5, 19) <= o["CREATED_AT"] < dt.datetime(2025, 6, 18)),)]),
    ("time-interval-current-month", {"source-table": ORDERS, "aggregation": [["count"]],
                                     "filter": ["time-interval", f("ORDERS.CREATED_AT"), "current", "month"]}, True, (),
     [(orders_where(lambda o: dt.datetime(2025, 6, 1) <= o["CREATED_AT"] < dt.datetime(2025, 7, 1)),)]),
    ("time-interval-include-current", {"source-table": ORDERS, "aggregation": [["count"]],
                                       "filter": ["time-interval", f("ORDERS.CREATED_AT"), -2, "week",
                                                  {"include-current": True}]}, True, (),
     [(orders_where(lambda o: dt.datetime(2025, 6, 1) <= o["CREATED_AT"] < dt.datetime(2025, 6, 22)),)]),
    ("time-interval-last-quarter", {"source-table": ORDERS, "aggregation": [["count"]],
                                    "filter": ["time-interval", f("ORDERS.CREATED_AT"), "last", "quarter"]}, True, (),
     [(orders_where(lambda o: dt.datetime(2025, 1, 1) <= o["CREATED_AT"] < dt.datetime(2025, 4, 1)),)]),
    ("relative-time-interval", {"source-table": ORDERS, "aggregation": [["count"]],
                                "filter": ["relative-time-interval", f("ORDERS.CREATED_AT"), -1, "month", -1, "year"]},
     True, (), [(orders_where(lambda o: dt.datetime(2024, 5, 1) <= o["CREATED_AT"] < dt.datetime(2024, 6, 1)),)]),
    ("relative-time-interval-days", {"source-table": ORDERS, "aggregation": [["count"]],
                                     "filter": ["relative-time-interval", f("ORDERS.CREATED_AT"), -2, "week", -10, "day"]},
     True, (), [(orders_where(lambda o: dt.datetime(2025, 5, 22) <= o["CREATED_AT"] < dt.datetime(2025, 6, 5)),)]),
    ("not-starts-with-keeps-nulls", {"source-table": PEOPLE, "aggregation": [["count"]],
                                     "filter": ["not", ["starts-with", f("PEOPLE.SOURCE"), "G"]]}, True, (),
     [(sum(1 for p in R["PEOPLE"] if not (p["SOURCE"] or "").startswith("G")),)]),
    ("during", {"source-table": ORDERS, "aggregation": [["count"]],
                "filter": ["during", f("ORDERS.CREATED_AT"), "2024-02-10", "month"]}, True, (),
     [(orders_where(lambda o: (o["CREATED_AT"].year, o["CREATED_AT"].month) == (2024, 2)),)]),
    ("relative-datetime", {"source-table": ORDERS, "aggregation": [["count"]],
                           "filter": ["=", f("ORDERS.CREATED_AT", temporal_unit="week"),
                                      ["relative-datetime", -1, "week"]]}, True, (),
     [(orders_where(lambda o: dt.datetime(2025, 6, 8) <= o["CREATED_AT"] < dt.datetime(2025, 6, 15)),)]),
    # ---- default day bucketing (Metabase's auto-bucket-datetimes) ----
    ("auto-bucket-breakout", {"source-table": ORDERS, "aggregation": [["count"]], "breakout": [f("ORDERS.CREATED_AT")]},
     True, (), count_by(dt.datetime.combine(o["CREATED_AT"].date(), dt.time()) for o in R["ORDERS"])),
    ("auto-bucket-date-breakout", {"source-table": PEOPLE, "aggregation": [["count"]],
                                   "breakout": [f("PEOPLE.BIRTH_DATE")]}, True, (),
     count_by(p["BIRTH_DATE"] for p in R["PEOPLE"])),
    ("auto-bucket-implicit-join-breakout", {"source-table": ORDERS, "aggregation": [["sum", f("ORDERS.QUANTITY")]],
                                            "breakout": [fk("PEOPLE.CREATED_AT", "ORDERS.USER_ID")]}, True, (),
     sorted((day, quantity(rows)) for (day,), rows in grouped(
         lambda o: (dt.datetime.combine(PEOPLE_BY_ID[o["USER_ID"]]["CREATED_AT"].date(), dt.time()),)).items())),
    ("auto-bucket-nested-breakout", {"source-query": {"source-table": ORDERS, "fields": [f("ORDERS.ID"), f("ORDERS.CREATED_AT")]},
                                     "aggregation": [["count"]],
                                     "breakout": [["field", "CREATED_AT", {"base-type": "type/DateTime"}]]}, True, (),
     count_by(dt.datetime.combine(o["CREATED_AT"].date(), dt.time()) for o in R["ORDERS"])),
    ("auto-bucket-default-unit-is-raw", {"source-table": ORDERS, "aggregation": [["count"]],
                                         "breakout": [f("ORDERS.CREATED_AT", temporal_unit="default")]}, True, (),
     count_by(o["CREATED_AT"].replace(microsecond=0) for o in R["ORDERS"])),
    ("auto-bucket-filter-after-date", {"source-table": ORDERS, "aggregation": [["count"]],
                                       "filter": ["and", [">", f("ORDERS.CREATED_AT"), "2025-06-01"],
                                                  ["<=", f("ORDERS.CREATED_AT"), "2025-06-10"]]}, True, (),
     [(orders_where(lambda o: dt.date(2025, 6, 1) < o["CREATED_AT"].date() <= dt.date(2025, 6, 10)),)]),
    # A relative datetime is truncated to its own unit, then compared with the day-bucketed column:
    # from the first day of the month 13 months back through the first day of last month, inclusive.
    ("auto-bucket-relative-month-bounds", {"source-table": ORDERS, "aggregation": [["count"]],
                                           "filter": ["between", f("ORDERS.CREATED_AT"), ["relative-datetime", -13, "month"],
                                                      ["relative-datetime", -1, "month"]]}, True, (),
     [(orders_where(lambda o: dt.date(2024, 5, 1) <= o["CREATED_AT"].date() <= dt.date(2025, 5, 1)),)]),
    ("extraction-filter", {"source-table": ORDERS, "aggregation": [["count"]],
                           "filter": ["=", f("ORDERS.CREATED_AT", temporal_unit="day-of-week"), 1]}, True, (),
     [(orders_where(lambda o: o["CREATED_AT"].weekday() == 6),)]),
    # ---- expressions ----
    ("arithmetic-expressions", {"source-table": ORDERS, "expressions": {
        "net": ["-", f("ORDERS.TOTAL"), f("ORDERS.TAX")],
        "per item": ["/", ["-", f("ORDERS.TOTAL"), f("ORDERS.TAX")], f("ORDERS.QUANTITY")],
        "int ratio": ["/", f("ORDERS.QUANTITY"), 4],
        "rounded": ["round", ["*", f("ORDERS.SUBTOTAL"), 1.5]],
        "math": ["+", ["floor", f("ORDERS.TAX")], ["ceil", f("ORDERS.TAX")], ["abs", ["-", 0, f("ORDERS.QUANTITY")]],
                 ["power", f("ORDERS.QUANTITY"), 2], ["sqrt", 16]],
        "discount or zero": ["coalesce", f("ORDERS.DISCOUNT"), 0]},
        "fields": [f("ORDERS.ID"), ["expression", "net"], ["expression", "per item"], ["expression", "int ratio"],
                   ["expression", "rounded"], ["expression", "math"], ["expression", "discount or zero"]],
        "order-by": [["asc", f("ORDERS.ID")]], "limit": 15}, True, (),
     [(o["ID"], o["TOTAL"] - o["TAX"], (o["TOTAL"] - o["TAX"]) / o["QUANTITY"], o["QUANTITY"] / 4, None,
       math.floor(o["TAX"]) + math.ceil(o["TAX"]) + o["QUANTITY"] + o["QUANTITY"] ** 2 + 4, o["DISCOUNT"] or 0)
      for o in R["ORDERS"][:15]]),
    ("string-expressions", {"source-table": PEOPLE, "expressions": {
        "upper": ["upper", f("PEOPLE.NAME")], "lower": ["lower", f("PEOPLE.STATE")],
        "trimmed": ["trim", ["concat", "  ", f("PEOPLE.STATE"), "  "]], "len": ["length", f("PEOPLE.NAME")],
        "first3": ["substring", f("PEOPLE.EMAIL"), 1, 3], "label": ["concat", f("PEOPLE.NAME"), " (", f("PEOPLE.STATE"), ")"],
        "swapped": ["replace", f("PEOPLE.EMAIL"), "example", "ex"]},
        "fields": [f("PEOPLE.ID"), *[["expression", n] for n in ("upper", "lower", "trimmed", "len", "first3", "label", "swapped")]],
        "order-by": [["asc", f("PEOPLE.ID")]]}, True, (),
     [(p["ID"], p["NAME"].upper(), p["STATE"].lower(), p["STATE"], len(p["NAME"]), p["EMAIL"][:3],
       f"{p['NAME']} ({p['STATE']})", p["EMAIL"].replace("example", "ex")) for p in R["PEOPLE"]]),
    ("regex-match-first", {"source-table": PEOPLE, "expressions": {"domain": ["regex-match-first", f("PEOPLE.EMAIL"), "[a-z]+[.][a-z]+$"],
                                                                  "digits": ["regex-match-first", f("PEOPLE.EMAIL"), "[0-9]+"]},
                           "fields": [f("PEOPLE.ID"), ["expression", "domain"], ["expression", "digits"]],
                           "order-by": [["asc", f("PEOPLE.ID")]]}, True, ("regex",),
     [(p["ID"], (re.search("[a-z]+[.][a-z]+$", p["EMAIL"]) or [None])[0], (re.search("[0-9]+", p["EMAIL"]) or [None])[0])
      for p in R["PEOPLE"]]),
    ("case-expression", {"source-table": ORDERS, "expressions": {
        "size": ["case", [[["<", f("ORDERS.TOTAL"), 50], "small"], [["<", f("ORDERS.TOTAL"), 150], "medium"]],
                 {"default": "large"}]},
        "aggregation": [["count"]], "breakout": [["expression", "size"]]}, True, (),
     count_by("small" if o["TOTAL"] < 50 else "medium" if o["TOTAL"] < 150 else "large" for o in R["ORDERS"])),
    ("date-expressions", {"source-table": ORDERS, "expressions": {
        "year": ["get-year", f("ORDERS.CREATED_AT")], "month": ["get-month", f("ORDERS.CREATED_AT")],
        "dow": ["get-day-of-week", f("ORDERS.CREATED_AT")], "hour": ["get-hour", f("ORDERS.CREATED_AT")],
        "quarter": ["get-quarter", f("ORDERS.CREATED_AT")],
        "month name": ["month-name", ["get-month", f("ORDERS.CREATED_AT")]],
        "plus 10 days": ["datetime-add", f("ORDERS.CREATED_AT"), 10, "day"],
        "minus 2 months": ["datetime-subtract", f("ORDERS.CREATED_AT"), 2, "month"]},
        "fields": [f("ORDERS.ID"), *[["expression", n] for n in ("year", "month", "dow", "hour", "quarter", "month name",
                                                                  "plus 10 days", "minus 2 months")]],
        "filter": ["<=", f("ORDERS.ID"), R["ORDERS"][19]["ID"]], "order-by": [["asc", f("ORDERS.ID")]]}, True, (),
     [(o["ID"], o["CREATED_AT"].year, o["CREATED_AT"].month, (o["CREATED_AT"].weekday() + 1) % 7 + 1,
       o["CREATED_AT"].hour, (o["CREATED_AT"].month + 2) // 3, o["CREATED_AT"].strftime("%B"),
       o["CREATED_AT"] + dt.timedelta(days=10), temporal.add(o["CREATED_AT"], -2, "month"))
      for o in R["ORDERS"][:20]]),
    ("iso-day-of-week-and-in", {"source-table": ORDERS, "expressions": {
        "iso dow": ["get-day-of-week", f("ORDERS.CREATED_AT"), "iso"]},
        "aggregation": [["count"]], "breakout": [["expression", "iso dow"]],
        "filter": ["and", ["in", f("ORDERS.QUANTITY"), 1, 2], ["not-in", f("ORDERS.USER_ID"), 3, 4]]}, True, (),
     count_by(o["CREATED_AT"].isoweekday() for o in R["ORDERS"] if o["QUANTITY"] in (1, 2) and o["USER_ID"] not in (3, 4))),
    ("datetime-diff", {"source-table": ORDERS, "joins": [{
        "source-table": PEOPLE, "alias": "U", "condition": ["=", f("ORDERS.USER_ID"), f("PEOPLE.ID", join_alias="U")]}],
        "expressions": {u: ["datetime-diff", f("PEOPLE.CREATED_AT", join_alias="U"), f("ORDERS.CREATED_AT"), u]
                        for u in ("year", "quarter", "month", "week", "day", "hour", "minute", "second")},
        "fields": [f("ORDERS.ID"), *[["expression", u] for u in ("year", "quarter", "month", "week", "day", "hour",
                                                                  "minute", "second")]],
        "order-by": [["asc", f("ORDERS.ID")]]}, True, (),
     [(o["ID"], trunc(months_between(u, o["CREATED_AT"]) / 12), trunc(months_between(u, o["CREATED_AT"]) / 3),
       months_between(u, o["CREATED_AT"]), trunc((o["CREATED_AT"].date() - u.date()).days / 7),
       (o["CREATED_AT"].date() - u.date()).days, trunc((o["CREATED_AT"] - u).total_seconds() / 3600),
       trunc((o["CREATED_AT"] - u).total_seconds() / 60), int((o["CREATED_AT"] - u).total_seconds()))
      for o in R["ORDERS"] for u in [next(p["CREATED_AT"] for p in R["PEOPLE"] if p["ID"] == o["USER_ID"])]]),
    ("expression-filter", {"source-table": ORDERS, "expressions": {"net": ["-", f("ORDERS.TOTAL"), f("ORDERS.TAX")]},
                           "aggregation": [["count"]], "filter": [">", ["expression", "net"], 100]}, True, (),
     [(orders_where(lambda o: o["TOTAL"] - o["TAX"] > 100),)]),
    # ---- URL and email parts (SQLite: Tessera's fixed-pattern function), split-part ----
    ("url-parts-of-emails", {"source-table": PEOPLE, "expressions": {
        "host": ["host", f("PEOPLE.EMAIL")], "domain": ["domain", f("PEOPLE.EMAIL")],
        "subdomain": ["subdomain", f("PEOPLE.EMAIL")], "path": ["path", f("PEOPLE.EMAIL")],
        "url": ["concat", "https://www.", ["lower", f("PEOPLE.STATE")], ".shop.example.co.uk/people/", f("PEOPLE.ID"),
                "?tab=1#top"],
        **{f"{part} of url": [part, ["expression", "url"]] for part in ("host", "domain", "subdomain", "path")}},
        "fields": [f("PEOPLE.ID"), *[["expression", n] for n in ("host", "domain", "subdomain", "path")],
                   ["expression", "host of url"], ["expression", "domain of url"], ["expression", "subdomain of url"],
                   ["expression", "path of url"]],
        "order-by": [["asc", f("PEOPLE.ID")]]}, True, (),
     [(p["ID"], email_host(p["EMAIL"]), email_host(p["EMAIL"]).split(".")[0],
       # Metabase's subdomain of first.last@x.com is "first" (its pattern lets '@' into a segment)
       p["EMAIL"].split("@")[0].split(".")[0] if "." in p["EMAIL"].split("@")[0] else None, None,
       "example.co.uk", "example", p["STATE"].lower(), f"/people/{p['ID']}") for p in R["PEOPLE"]]),
    ("url-parts-examples", {"source-table": PRODUCTS, "expressions": {
        f"{part} {i}": [part, url] for part in ("host", "domain", "subdomain", "path") for i, url in enumerate(URLS)},
        "fields": [["expression", f"{part} {i}"] for part in ("host", "domain", "subdomain", "path")
                   for i in range(len(URLS))],
        "order-by": [["asc", f("PRODUCTS.ID")]], "limit": 1}, True, (),
     [tuple(URL_PARTS[url][k] for k in range(4) for url in URLS)]),
    ("split-part", {"source-table": PEOPLE, "expressions": {
        "first": ["split-part", f("PEOPLE.NAME"), " ", 1], "second": ["split-part", f("PEOPLE.NAME"), " ", 2],
        "third": ["split-part", f("PEOPLE.NAME"), " ", 3], "mailbox": ["split-part", f("PEOPLE.EMAIL"), "@", 1],
        "computed": ["split-part", f("PEOPLE.EMAIL"), ".", ["-", ["length", f("PEOPLE.STATE")], 0]],
        "below one": ["split-part", f("PEOPLE.EMAIL"), ".", ["-", 1, ["length", f("PEOPLE.STATE")]]],
        "long delimiter": ["split-part", ["concat", f("PEOPLE.STATE"), "<>", f("PEOPLE.NAME"), "<>"], "<>", 2],
        "no source": ["split-part", f("PEOPLE.SOURCE"), "o", 1]},
        "fields": [f("PEOPLE.ID"), *[["expression", n] for n in ("first", "second", "third", "mailbox", "computed",
                                                                  "below one", "long delimiter", "no source")]],
        "order-by": [["asc", f("PEOPLE.ID")]]}, True, (),
     [(p["ID"], piece(p["NAME"], " ", 1), piece(p["NAME"], " ", 2), piece(p["NAME"], " ", 3), piece(p["EMAIL"], "@", 1),
       piece(p["EMAIL"], ".", len(p["STATE"])), "", p["NAME"], piece(p["SOURCE"], "o", 1)) for p in R["PEOPLE"]]),
    ("split-part-examples", {"source-table": PRODUCTS, "expressions": {
        str(i): ["split-part", text, delimiter, position] for i, (text, delimiter, position, _) in enumerate(SPLITS)},
        "fields": [["expression", str(i)] for i in range(len(SPLITS))],
        "order-by": [["asc", f("PRODUCTS.ID")]], "limit": 1}, True, (), [tuple(s[3] for s in SPLITS)]),
    # ---- conversions ----
    ("conversions", {"source-table": ORDERS, "expressions": {
        "id text": ["text", f("ORDERS.ID")], "total text": ["text", f("ORDERS.TOTAL")],
        "whole float text": ["text", ["*", f("ORDERS.QUANTITY"), 1.0]],
        "id again": ["integer", ["text", f("ORDERS.ID")]], "total rounded": ["integer", f("ORDERS.TOTAL")],
        "half": ["integer", ["+", f("ORDERS.QUANTITY"), 0.5]], "minus half": ["integer", ["-", 0.5, f("ORDERS.QUANTITY")]],
        "quantity float": ["float", ["text", f("ORDERS.QUANTITY")]], "total float": ["float", f("ORDERS.TOTAL")],
        "day": ["date", f("ORDERS.CREATED_AT")], "day of text": ["date", ["text", f("ORDERS.CREATED_AT")]],
        "parsed": ["datetime", ["text", f("ORDERS.CREATED_AT")]],
        "unix days": ["datetime", ["*", f("ORDERS.ID"), 86400], {"mode": "unix-seconds"}]},
        "fields": [f("ORDERS.ID"), *[["expression", n] for n in (
            "id text", "total text", "whole float text", "id again", "total rounded", "half", "minus half",
            "quantity float", "total float", "day", "day of text", "parsed", "unix days")]],
        "filter": ["<=", f("ORDERS.ID"), R["ORDERS"][29]["ID"]], "order-by": [["asc", f("ORDERS.ID")]]}, True, (),
     [(o["ID"], str(o["ID"]), repr(o["TOTAL"]), str(o["QUANTITY"]), o["ID"], math.floor(o["TOTAL"] + 0.5),
       o["QUANTITY"] + 1, 1 - o["QUANTITY"], float(o["QUANTITY"]), o["TOTAL"], o["CREATED_AT"].date(),
       o["CREATED_AT"].date(), o["CREATED_AT"], dt.datetime(1970, 1, 1) + dt.timedelta(days=o["ID"]))
      for o in R["ORDERS"][:30]]),
    ("conversion-literals", {"source-table": PRODUCTS, "expressions": {
        "iso": ["datetime", "2024-03-05T10:20:30"], "iso space": ["datetime", "2024-03-05 10:20:30"],
        "iso date": ["datetime", "2024-03-05"], "simple": ["datetime", "20240305102030", {"mode": "simple"}],
        "seconds": ["datetime", 1700000000, {"mode": "unix-seconds"}],
        "milliseconds": ["datetime", 1700000000000, {"mode": "unixMilliseconds"}],
        "microseconds": ["datetime", 1700000000000000, {"mode": "unix-microseconds"}],
        "nanoseconds": ["datetime", 1700000000000000000, {"mode": "unix-nanoseconds"}],
        "before 1970": ["datetime", -86400, {"mode": "unix-seconds"}],
        "date of text": ["date", "2024-03-05T23:59:59"], "date only": ["date", "2024-02-29"],
        "integer of text": ["integer", "-42"], "float of text": ["float", "2.5"], "text of text": ["text", "x"],
        "text of date": ["text", ["date", "2024-03-05 10:00:00"]]},
        "fields": [["expression", n] for n in ("iso", "iso space", "iso date", "simple", "seconds", "milliseconds",
                                              "microseconds", "nanoseconds", "before 1970", "date of text", "date only",
                                              "integer of text", "float of text", "text of text", "text of date")],
        "order-by": [["asc", f("PRODUCTS.ID")]], "limit": 1}, True, (),
     [(dt.datetime(2024, 3, 5, 10, 20, 30), dt.datetime(2024, 3, 5, 10, 20, 30), dt.datetime(2024, 3, 5),
       dt.datetime(2024, 3, 5, 10, 20, 30), dt.datetime(2023, 11, 14, 22, 13, 20), dt.datetime(2023, 11, 14, 22, 13, 20),
       dt.datetime(2023, 11, 14, 22, 13, 20), dt.datetime(2023, 11, 14, 22, 13, 20), dt.datetime(1969, 12, 31),
       dt.date(2024, 3, 5), dt.date(2024, 2, 29), -42, 2.5, "x", dt.date(2024, 3, 5))]),
    ("today", {"source-table": ORDERS, "aggregation": [["count"]],
               "filter": ["=", ["expression", "today text"], ["expression", "now date text"]],
               "expressions": {"today text": ["text", ["today"]], "now date text": ["text", ["date", ["now"]]]}}, True, (),
     [(len(R["ORDERS"]),)]),
    # ---- time zones: fixed offsets on every engine (named zones: test_named_time_zones) ----
    ("convert-timezone-offsets", {"source-table": ORDERS, "expressions": {
        "tokyo offset": ["convert-timezone", f("ORDERS.CREATED_AT"), "+09:00"],
        "from paris to india": ["convert-timezone", f("ORDERS.CREATED_AT"), "+05:30", "+01:00"],
        "to utc": ["convert-timezone", f("ORDERS.CREATED_AT"), "UTC", "-03:00"]},
        "fields": [f("ORDERS.ID"), ["expression", "tokyo offset"], ["expression", "from paris to india"],
                   ["expression", "to utc"]],
        "order-by": [["asc", f("ORDERS.ID")]], "limit": 40}, True, (),
     [(o["ID"], o["CREATED_AT"] + dt.timedelta(hours=9), o["CREATED_AT"] + dt.timedelta(hours=4, minutes=30),
       o["CREATED_AT"] + dt.timedelta(hours=3)) for o in R["ORDERS"][:40]]),
    # ---- millisecond and second units ----
    ("millisecond-arithmetic", {"source-table": ORDERS, "expressions": {
        "plus 1.2 s": ["datetime-add", ["datetime-add", f("ORDERS.CREATED_AT"), 600, "millisecond"], 600, "millisecond"],
        "minus 0.4 s": ["datetime-subtract", f("ORDERS.CREATED_AT"), 400, "millisecond"],
        "later": ["datetime-add", f("ORDERS.CREATED_AT"), ["+", 1234, f("ORDERS.QUANTITY")], "millisecond"],
        "interval": ["+", f("ORDERS.CREATED_AT"), ["interval", 2500, "millisecond"]]},
        "fields": [f("ORDERS.ID"), ["expression", "plus 1.2 s"], ["expression", "minus 0.4 s"],
                   ["expression", "later", {"temporal-unit": "second"}],
                   ["expression", "later", {"temporal-unit": "millisecond"}], ["expression", "interval"]],
        "order-by": [["asc", f("ORDERS.ID")]], "limit": 25}, True, (),
     [(o["ID"], o["CREATED_AT"] + dt.timedelta(seconds=1), o["CREATED_AT"] - dt.timedelta(seconds=1),
       o["CREATED_AT"] + dt.timedelta(seconds=1), o["CREATED_AT"] + dt.timedelta(seconds=1),
       o["CREATED_AT"] + dt.timedelta(seconds=2)) for o in R["ORDERS"][:25]]),
    *[(f"breakout-{unit}", {"source-table": ORDERS, "aggregation": [["count"]],
                            "breakout": [f("ORDERS.CREATED_AT", temporal_unit=unit)]}, True, (),
       count_by(o["CREATED_AT"] for o in R["ORDERS"]))  # the sample's times are whole seconds
      for unit in ("second", "millisecond")],
    # ---- aggregations ----
    ("cumulative", {"source-table": ORDERS, "aggregation": [["cum-sum", f("ORDERS.QUANTITY")], ["cum-count"]],
                    "breakout": [f("ORDERS.CREATED_AT", temporal_unit="quarter")]}, True, (), None),
    ("cumulative-partitioned", {"source-table": ORDERS, "aggregation": [["cum-count"]],
                                "breakout": [fk("PRODUCTS.CATEGORY", "ORDERS.PRODUCT_ID"),
                                             f("ORDERS.CREATED_AT", temporal_unit="year")]}, True, (), None),
    # Metabase's window (sql.qp window-aggregation-over-rows): partitioned by every breakout but the finest
    # temporal one (the last when none is temporal), ordered by the query's order-by then the breakouts, the
    # finest temporal one last; the rows come back in that order too. Expected rows are computed in Python.
    ("cumulative-temporal-breakout-first", {
        "source-table": ORDERS, "aggregation": [["count"], ["cum-count"], ["cum-sum", f("ORDERS.QUANTITY")]],
        "breakout": [f("ORDERS.CREATED_AT", temporal_unit="year"), fk("PRODUCTS.CATEGORY", "ORDERS.PRODUCT_ID")]},
     True, (), [(year, category, n, total_n, total_q) for year, category, n, _q, total_n, total_q in running(
         grouped(lambda o: (year_of(o), category_of(o))), lambda k: k[1], lambda k: (k[1], k[0]), (len, quantity))]),
    ("cumulative-extracted-unit-is-finer", {
        "source-table": ORDERS, "aggregation": [["count"], ["cum-count"]],
        "breakout": [f("ORDERS.CREATED_AT", temporal_unit="month-of-year"),
                     f("ORDERS.CREATED_AT", temporal_unit="year")]},
     True, (), [(month, year, n, total) for month, year, n, total in running(
         grouped(lambda o: (o["CREATED_AT"].month, year_of(o))), lambda k: k[1], lambda k: (k[1], k[0]), (len,))]),
    ("cumulative-follows-aggregation-order", {
        "source-table": ORDERS, "aggregation": [["sum", f("ORDERS.QUANTITY")], ["cum-sum", f("ORDERS.QUANTITY")],
                                                ["cum-count"]],
        "breakout": [fk("PRODUCTS.CATEGORY", "ORDERS.PRODUCT_ID")], "order-by": [["desc", ["aggregation", 0]]]},
     True, (), [(category, q, total_q, total_n) for category, q, _n, total_q, total_n in running(
         BY_CATEGORY, lambda k: None, lambda k: (-quantity(BY_CATEGORY[k]), k), (quantity, len))]),
    ("cumulative-descending-breakout-then-limit", {
        "source-table": ORDERS, "aggregation": [["cum-sum", f("ORDERS.QUANTITY")]],
        "breakout": [f("ORDERS.CREATED_AT", temporal_unit="quarter")],
        "order-by": [["desc", f("ORDERS.CREATED_AT", temporal_unit="quarter")]], "limit": 3},
     True, (), [(quarter, total) for quarter, _q, total in running(
         grouped(lambda o: (quarter_of(o),)), lambda k: None, lambda k: -k[0].timestamp(), (quantity,))][:3]),
    ("cumulative-sorted-on-itself", {
        "source-table": ORDERS, "aggregation": [["cum-count"]], "order-by": [["desc", ["aggregation", 0]]],
        "breakout": [f("ORDERS.CREATED_AT", temporal_unit="year"), fk("PRODUCTS.CATEGORY", "ORDERS.PRODUCT_ID")]},
     True, (), sorted(((year, category, total) for year, category, _n, total in running(
         grouped(lambda o: (year_of(o), category_of(o))), lambda k: k[1], lambda k: (k[1], k[0]), (len,))),
         key=lambda r: (-r[2], r[1], r[0]))),
    ("cumulative-no-temporal-breakout", {
        "source-table": ORDERS, "aggregation": [["cum-sum", f("ORDERS.QUANTITY")]],
        "breakout": [fk("PRODUCTS.CATEGORY", "ORDERS.PRODUCT_ID"), fk("PEOPLE.SOURCE", "ORDERS.USER_ID")]},
     True, (), [(category, source, total) for category, source, _q, total in running(
         grouped(lambda o: (category_of(o), PEOPLE_BY_ID[o["USER_ID"]]["SOURCE"])), lambda k: k[0],
         lambda k: (k[0], k[1] is not None, k[1] or ""), (quantity,))]),
    ("cumulative-without-breakout", {
        "source-table": ORDERS, "aggregation": [["cum-sum", f("ORDERS.QUANTITY")], ["cum-count"]]},
     True, (), [(quantity(R["ORDERS"]), len(R["ORDERS"]))]),
    ("stddev-var", {"source-table": ORDERS, "aggregation": [["stddev", f("ORDERS.TOTAL")], ["var", f("ORDERS.QUANTITY")]]},
     True, ("standard-deviation-aggregations",), None),
    ("median-percentile", {"source-table": ORDERS, "aggregation": [["median", f("ORDERS.TOTAL")],
                                                                   ["percentile", f("ORDERS.QUANTITY"), 0.9]]},
     True, ("percentile-aggregations",), None),
    ("conditional-aggregations", {"source-table": ORDERS, "aggregation": [
        ["share", [">", f("ORDERS.QUANTITY"), 2]], ["count-where", ["not-null", f("ORDERS.DISCOUNT")]],
        ["sum-where", f("ORDERS.SUBTOTAL"), ["=", f("ORDERS.QUANTITY"), 1]],
        ["distinct-where", f("ORDERS.USER_ID"), ["<", f("ORDERS.TOTAL"), 60]]]}, True, (),
     [(orders_where(lambda o: o["QUANTITY"] > 2) / len(R["ORDERS"]), orders_where(lambda o: o["DISCOUNT"] is not None),
       sum(o["SUBTOTAL"] for o in R["ORDERS"] if o["QUANTITY"] == 1),
       len({o["USER_ID"] for o in R["ORDERS"] if o["TOTAL"] < 60}))]),
    ("aggregation-expressions", {"source-table": ORDERS, "aggregation": [
        ["aggregation-options", ["/", ["sum", f("ORDERS.TOTAL")], ["count"]], {"name": "avg_total", "display-name": "Avg"}],
        ["+", ["max", f("ORDERS.QUANTITY")], 1]], "breakout": [fk("PRODUCTS.CATEGORY", "ORDERS.PRODUCT_ID")]}, True, (), None),
    # ---- offset (LAG/LEAD over the breakouts or the order-by) ----
    ("offset-by-year", {"source-table": ORDERS, "breakout": [f("ORDERS.CREATED_AT", temporal_unit="year")],
                        "aggregation": [["sum", f("ORDERS.QUANTITY")],
                                        ["offset", {"name": "previous"}, ["sum", f("ORDERS.QUANTITY")], -1],
                                        ["offset", {}, ["count"], 2],
                                        ["-", ["sum", f("ORDERS.QUANTITY")], ["offset", {}, ["sum", f("ORDERS.QUANTITY")], -1]]]},
     True, (), shifted_rows(sorted({dt.datetime(o["CREATED_AT"].year, 1, 1) for o in R["ORDERS"]}),
                            lambda year: [o for o in R["ORDERS"] if o["CREATED_AT"].year == year.year])),
    ("offset-partitioned", {"source-table": ORDERS, "aggregation": [["count"], ["offset", {}, ["count"], -1]],
                            "breakout": [f("ORDERS.CREATED_AT", temporal_unit="year"),
                                         fk("PRODUCTS.CATEGORY", "ORDERS.PRODUCT_ID")]}, True, (),
     # rows come sorted as Metabase's window stage sorts them: category, then the (finest temporal) year
     sorted(((year, category, n, previous) for category in sorted({p["CATEGORY"] for p in R["PRODUCTS"]})
             for year, n, previous in per_category_years(category)), key=lambda r: (r[1], r[0]))),
    ("offset-over-order-by", {"source-table": ORDERS, "aggregation": [["count"], ["offset", {}, ["count"], 1]],
                              "breakout": [fk("PRODUCTS.CATEGORY", "ORDERS.PRODUCT_ID")],
                              "order-by": [["desc", ["aggregation", 0]]]}, True, (),
     [(c, n, nxt) for (c, n), nxt in zip(CATEGORY_COUNTS, [n for _, n in CATEGORY_COUNTS[1:]] + [None])]),
    # ---- joins ----
    ("left-join-all", {"source-table": ORDERS, "joins": [{
        "source-table": PRODUCTS, "alias": "Products", "fields": "all",
        "condition": ["=", f("ORDERS.PRODUCT_ID"), f("PRODUCTS.ID", join_alias="Products")]}],
        "order-by": [["asc", f("ORDERS.ID")]], "limit": 8}, True, (), None),
    ("inner-join-fields", {"source-table": ORDERS, "fields": [f("ORDERS.ID")], "joins": [{
        "source-table": PEOPLE, "alias": "U", "strategy": "inner-join", "fields": [f("PEOPLE.STATE", join_alias="U")],
        "condition": ["and", ["=", f("ORDERS.USER_ID"), f("PEOPLE.ID", join_alias="U")],
                      ["=", f("PEOPLE.SOURCE", join_alias="U"), "Google"]]}],
        "order-by": [["asc", f("ORDERS.ID")]]}, True, (), None),
    ("right-join", {"source-table": ORDERS, "aggregation": [["count", f("ORDERS.ID")]],
                    "breakout": [f("PEOPLE.ID", join_alias="P")], "joins": [{
                        "source-table": PEOPLE, "alias": "P", "strategy": "right-join",
                        "condition": ["and", ["=", f("ORDERS.USER_ID"), f("PEOPLE.ID", join_alias="P")],
                                      [">", f("ORDERS.QUANTITY"), 4]]}]}, True, ("right-join",), None),
    ("full-join", {"source-table": PRODUCTS, "aggregation": [["count"]],
                   "breakout": [f("PRODUCTS.CATEGORY"), f("PEOPLE.STATE", join_alias="P")], "joins": [{
                       "source-table": PEOPLE, "alias": "P", "strategy": "full-join",
                       "condition": ["=", f("PRODUCTS.ID"), f("PEOPLE.ID", join_alias="P")]}]}, True, ("full-join",), None),
    ("join-source-query", {"source-table": PEOPLE, "fields": [f("PEOPLE.ID"), f("PEOPLE.NAME")], "joins": [{
        "alias": "Totals", "fields": "all",
        "source-query": {"source-table": ORDERS, "aggregation": [["sum", f("ORDERS.TOTAL")]], "breakout": [f("ORDERS.USER_ID")]},
        "condition": ["=", f("PEOPLE.ID"), ["field", "USER_ID", {"base-type": "type/Integer", "join-alias": "Totals"}]]}],
        "order-by": [["asc", f("PEOPLE.ID")]]}, True, (), None),
    ("join-breakout-and-implicit", {"source-table": ORDERS, "aggregation": [["avg", f("PRODUCTS.RATING", join_alias="Pr")]],
                                    "breakout": [fk("PEOPLE.SOURCE", "ORDERS.USER_ID")], "joins": [{
                                        "source-table": PRODUCTS, "alias": "Pr",
                                        "condition": ["=", f("ORDERS.PRODUCT_ID"), f("PRODUCTS.ID", join_alias="Pr")]}]},
     True, (), None),
    ("implicit-join-through-explicit-join", {"source-table": PRODUCTS, "aggregation": [["count"]],
                                             "breakout": [["field", "$PEOPLE.SOURCE", {"source-field": "$ORDERS.USER_ID",
                                                                                       "source-field-join-alias": "O"}]],
                                             "joins": [{"source-table": ORDERS, "alias": "O", "strategy": "inner-join",
                                                        "condition": ["=", f("PRODUCTS.ID"), f("ORDERS.PRODUCT_ID", join_alias="O")]}]},
     True, (), count_by(next(p["SOURCE"] for p in R["PEOPLE"] if p["ID"] == o["USER_ID"]) for o in R["ORDERS"])),
    # ---- nested queries ----
    ("nested-filter-on-aggregate", {"source-query": {"source-table": ORDERS, "aggregation": [["count"]],
                                                     "breakout": [f("ORDERS.USER_ID")]},
                                    "filter": [">", ["field", "count", {"base-type": "type/BigInteger"}], 8],
                                    "order-by": [["desc", ["field", "count", {"base-type": "type/BigInteger"}]],
                                                 ["asc", f("ORDERS.USER_ID")]]}, True, (),
     sorted(((u, n) for u, n in Counter(o["USER_ID"] for o in R["ORDERS"]).items() if n > 8), key=lambda r: (-r[1], r[0]))),
    ("nested-aggregate-twice", {"source-query": {"source-table": ORDERS, "aggregation": [["sum", f("ORDERS.QUANTITY")]],
                                                 "breakout": [f("ORDERS.CREATED_AT", temporal_unit="month")]},
                                "aggregation": [["max", ["field", "sum", {"base-type": "type/Integer"}]], ["count"]],
                                "breakout": [f("ORDERS.CREATED_AT", temporal_unit="year")]}, True, (), None),
    ("three-stages", {"source-query": {"source-query": {"source-table": ORDERS, "filter": [">", f("ORDERS.QUANTITY"), 1],
                                                        "fields": [f("ORDERS.ID"), f("ORDERS.TOTAL"), f("ORDERS.USER_ID")]},
                                       "expressions": {"double": ["*", ["field", "TOTAL", {"base-type": "type/Float"}], 2]},
                                       "filter": ["<", ["expression", "double"], 300]},
                      "aggregation": [["count"], ["sum", ["field", "double", {"base-type": "type/Float"}]]]}, True, (),
     [(orders_where(lambda o: o["QUANTITY"] > 1 and o["TOTAL"] * 2 < 300),
       sum(o["TOTAL"] * 2 for o in R["ORDERS"] if o["QUANTITY"] > 1 and o["TOTAL"] * 2 < 300))]),
]

# --------------------------------------------------------------------------------------------------
# Coercion strategies (core.query.coercion): EVENTS' columns carry them (sample.COERCED); every row
# encodes one UTC instant, MOMENT, in each temporal form, so Python answers from MOMENT alone.
# --------------------------------------------------------------------------------------------------

EVENTS = "$$EVENTS"
EV = R["EVENTS"]


def month_of(moment: dt.datetime) -> dt.datetime:
    return dt.datetime(moment.year, moment.month, 1)


def events_by(key, rows=EV, value=len) -> list[tuple]:
    groups: dict = {}
    for e in rows:
        groups.setdefault(key(e), []).append(e)
    return [(k, value(groups[k])) for k in sorted(groups)]


def halves_up(x: float) -> int:
    return math.floor(x + 0.5)


FEBRUARY = [e for e in EV if e["MOMENT"] < dt.datetime(2024, 2, 1)]
assert any(e["MOMENT"] == dt.datetime(2024, 1, 31, 23, 59, 59) for e in FEBRUARY), "a second before the month's end"
JAN_15_TO_FEB_15 = [e for e in EV if dt.date(2024, 1, 15) <= e["MOMENT"].date() <= dt.date(2024, 2, 15)]

CASES += [
    ("coerced-unix-seconds-month-date-filter", {
        "source-table": EVENTS, "aggregation": [["count"]], "breakout": [f("EVENTS.AT_SECONDS", temporal_unit="month")],
        "filter": ["<", f("EVENTS.AT_SECONDS"), "2024-02-01"]}, True, (),
     events_by(lambda e: month_of(e["MOMENT"]), FEBRUARY)),
    ("coerced-unix-millis-day-between", {
        "source-table": EVENTS, "aggregation": [["count"]], "breakout": [f("EVENTS.AT_MILLIS", temporal_unit="day")],
        "filter": ["between", f("EVENTS.AT_MILLIS"), "2024-01-15", "2024-02-15"]}, True, (),
     events_by(lambda e: dt.datetime.combine(e["MOMENT"].date(), dt.time()), JAN_15_TO_FEB_15)),
    ("coerced-unix-millis-on-a-day", {
        "source-table": EVENTS, "fields": [f("EVENTS.ID"), f("EVENTS.AT_MILLIS")],
        "filter": ["=", f("EVENTS.AT_MILLIS"), "2024-01-31"], "order-by": [["asc", f("EVENTS.ID")]]}, True, (),
     [(e["ID"], e["MOMENT"]) for e in EV if e["MOMENT"].date() == dt.date(2024, 1, 31)]),
    ("coerced-iso-text-month", {
        "source-table": EVENTS, "aggregation": [["count"], ["max", f("EVENTS.AT_ISO")]],
        "breakout": [f("EVENTS.AT_ISO", temporal_unit="month")]}, True, (),
     [(k, n, m) for (k, n), (_, m) in zip(events_by(lambda e: month_of(e["MOMENT"])),
                                          events_by(lambda e: month_of(e["MOMENT"]),
                                                    value=lambda rows: max(e["MOMENT"] for e in rows)))]),
    ("coerced-columns-selected", {
        "source-table": EVENTS, "fields": [f(f"EVENTS.{c}") for c in ("ID", "AT_SECONDS", "AT_MILLIS", "AT_ISO", "DAY_ISO",
                                                                       "STAMP", "HAPPENED_AT")],
        "order-by": [["asc", f("EVENTS.ID")]]}, True, (),
     [(e["ID"], e["MOMENT"], e["MOMENT"], e["MOMENT"], e["MOMENT"].date(), e["MOMENT"], e["MOMENT"].date()) for e in EV]),
    ("coerced-dates-bucketed", {
        "source-table": EVENTS, "aggregation": [["count"]],
        "breakout": [f("EVENTS.HAPPENED_AT", temporal_unit="month"), f("EVENTS.DAY_ISO", temporal_unit="quarter"),
                     f("EVENTS.STAMP", temporal_unit="year")]}, True, (),
     [(*k, n) for k, n in events_by(lambda e: (month_of(e["MOMENT"]), temporal.truncate(e["MOMENT"], "quarter"),
                                                dt.datetime(e["MOMENT"].year, 1, 1)))]),
    ("coerced-string-to-integer", {
        "source-table": EVENTS, "aggregation": [["sum", f("EVENTS.COUNT_TEXT")], ["count"], ["max", f("EVENTS.COUNT_TEXT")]],
        "filter": [">", f("EVENTS.COUNT_TEXT"), 50]}, True, (),
     [(sum(int(e["COUNT_TEXT"]) for e in EV if int(e["COUNT_TEXT"]) > 50),
       sum(1 for e in EV if int(e["COUNT_TEXT"]) > 50), max(int(e["COUNT_TEXT"]) for e in EV))]),
    ("coerced-string-to-float", {
        "source-table": EVENTS, "aggregation": [["sum", f("EVENTS.PRICE_TEXT")], ["count"]],
        "filter": [">=", f("EVENTS.PRICE_TEXT"), 100]}, True, (),
     [(sum(float(e["PRICE_TEXT"]) for e in EV if float(e["PRICE_TEXT"]) >= 100),
       sum(1 for e in EV if float(e["PRICE_TEXT"]) >= 100))]),
    ("coerced-float-to-integer", {
        "source-table": EVENTS, "fields": [f("EVENTS.ID"), f("EVENTS.SCORE")], "order-by": [["asc", f("EVENTS.ID")]]},
     True, (), [(e["ID"], halves_up(e["SCORE"])) for e in EV]),
    ("coerced-float-to-integer-sum", {
        "source-table": EVENTS, "aggregation": [["sum", f("EVENTS.SCORE")]], "breakout": [f("EVENTS.SCORE")]}, True, (),
     events_by(lambda e: halves_up(e["SCORE"]), value=lambda rows: sum(halves_up(e["SCORE"]) for e in rows))),
    ("coerced-in-expression-and-order", {
        "source-table": EVENTS, "expressions": {"next day": ["datetime-add", f("EVENTS.AT_SECONDS"), 1, "day"],
                                                "hours": ["datetime-diff", f("EVENTS.AT_ISO"), f("EVENTS.AT_MILLIS"), "hour"]},
        "fields": [f("EVENTS.ID"), ["expression", "next day"], ["expression", "hours"]],
        "order-by": [["desc", f("EVENTS.AT_SECONDS")]], "limit": 5}, True, (),
     [(e["ID"], e["MOMENT"] + dt.timedelta(days=1), 0) for e in sorted(EV, key=lambda e: e["MOMENT"], reverse=True)[:5]]),
    ("coerced-join-condition", {
        "source-table": EVENTS, "aggregation": [["count"]], "joins": [{
            "source-table": EVENTS, "alias": "E", "strategy": "inner-join", "fields": "none",
            "condition": ["=", f("EVENTS.AT_SECONDS"), f("EVENTS.AT_ISO", join_alias="E")]}]}, True, (),
     [(sum(1 for a in EV for b in EV if a["MOMENT"] == b["MOMENT"]),)]),
    ("coerced-nested-stage", {
        "source-query": {"source-table": EVENTS, "aggregation": [["count"]],
                         "breakout": [f("EVENTS.AT_SECONDS", temporal_unit="month")]},
        "aggregation": [["sum", ["field", "count", {"base-type": "type/BigInteger"}]]],
        "breakout": [f("EVENTS.AT_SECONDS", temporal_unit="year")]}, True, (),
     events_by(lambda e: dt.datetime(e["MOMENT"].year, 1, 1))),
]
CASE_IDS = [c[0] for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def normal(value):
    """One comparable form for a value from any engine (and for Python's expected values)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float, Decimal)):
        return float(value)
    if isinstance(value, dt.datetime):
        return value.replace(microsecond=0, tzinfo=None)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if isinstance(value, str):
        parsed = temporal.parse(value.replace(".000000", ""))
        if parsed is not None:
            return normal(parsed)
    return value


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def assert_rows_equal(actual, expected, context: str) -> None:
    assert len(actual) == len(expected), f"{context}: {len(actual)} rows, expected {len(expected)}\n{actual}\n{expected}"
    for i, (row, want) in enumerate(zip(actual, expected)):
        assert len(row) == len(want), f"{context} row {i}: {row} vs {want}"
        assert all(same(a, b) for a, b in zip(row, want)), f"{context} row {i}: {row} != {want}"


def sort_key(row):
    return tuple((v is not None, str(type(v)), v if v is not None else 0) for v in row)


def run_case(sample_db, query, week_start: int = 6) -> list[tuple]:
    normalized = normalize(sample.resolve({"database": "$db", "type": "query", "query": query}, sample_db.ids))
    compiled = compile_query(sample_db.session, normalized, sample_db.driver, now=sample.NOW, week_start=week_start)
    return [tuple(normal(v) for v in row) for row in sample_db.run(compiled.sql, compiled.params)]


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_conformance(samples, case):
    name, query, ordered, features, expected = case
    results = {}
    for engine in ENGINES:
        sample_db = samples[engine]
        if not all(feature in sample_db.driver.features for feature in features):
            with pytest.raises(Invalid, match="not supported by the"):
                run_case(sample_db, query)
            continue
        rows = run_case(sample_db, query)
        results[engine] = rows if ordered else sorted(rows, key=sort_key)
    assert len(results) >= 2, f"{name} ran on fewer than two engines"
    reference_engine, reference = next(iter(results.items()))
    assert reference, f"{name}: no rows on {reference_engine}; the case tests nothing"
    for engine, rows in results.items():
        assert_rows_equal(rows, reference, f"{name}: {engine} vs {reference_engine}")
    if expected is not None:
        want = [tuple(normal(v) for v in row) for row in expected]
        got = reference
        if name == "arithmetic-expressions":
            # ROUND's half-way rule differs from Python's banker's rounding: check that column apart.
            assert all(abs(g[4] - o["SUBTOTAL"] * 1.5) <= 0.5 for g, o in zip(got, R["ORDERS"]))
            got = [g[:4] + (None,) + g[5:] for g in got]
        assert_rows_equal(got, want if ordered else sorted(want, key=sort_key), f"{name}: {reference_engine} vs Python")


def test_whole_number_math_is_an_integer_on_every_engine(samples):
    """ceil, floor and round are declared type/Integer, and every engine answers them as integers: from
    a double (PostgreSQL and DuckDB gave 27.0), a quotient and an integer column; NULL stays NULL."""
    names = ("ceil", "floor", "round", "round int")
    query = {"source-table": ORDERS, "expressions": {
        "ceil": ["ceil", f("ORDERS.TAX")], "floor": ["floor", f("ORDERS.DISCOUNT")],
        "round": ["round", ["/", f("ORDERS.TOTAL"), f("ORDERS.QUANTITY")]], "round int": ["round", f("ORDERS.QUANTITY")]},
        "fields": [f("ORDERS.ID"), *[["expression", n] for n in names]], "order-by": [["asc", f("ORDERS.ID")]],
        "limit": 30}
    orders = R["ORDERS"][:30]
    assert any(o["DISCOUNT"] is None for o in orders) and any(o["DISCOUNT"] is not None for o in orders)
    for engine in ENGINES:
        sample_db = samples[engine]
        normalized = normalize(sample.resolve({"database": "$db", "type": "query", "query": query}, sample_db.ids))
        compiled = compile_query(sample_db.session, normalized, sample_db.driver, now=sample.NOW)
        assert [c["base_type"] for c in compiled.columns[1:]] == ["type/Integer"] * len(names), engine
        rows = sample_db.run(compiled.sql, compiled.params)
        assert len(rows) == len(orders), engine
        for row, o in zip(rows, orders):
            ceil, floor, rounded, whole = row[1:]
            context = (engine, row, o)
            assert all(type(v) is int for v in (ceil, rounded, whole)), context
            assert ceil == math.ceil(o["TAX"]) and whole == o["QUANTITY"], context
            assert abs(rounded - o["TOTAL"] / o["QUANTITY"]) <= 0.5, context
            if o["DISCOUNT"] is None:
                assert floor is None, context
            else:
                assert type(floor) is int and floor == math.floor(o["DISCOUNT"]), context


# --------------------------------------------------------------------------------------------------
# Start of week: the start-of-week setting (a Python weekday here, as the processor passes it) moves
# week buckets, day-of-week numbers, instance weeks and relative week filters; ISO and US weeks stay.
# --------------------------------------------------------------------------------------------------

WEEK_STARTS = {"monday": 0, "sunday": 6, "wednesday": 2}  # sample.NOW is a Wednesday


def orders_from(lo: dt.datetime, hi: dt.datetime) -> list[tuple]:
    return [(orders_where(lambda o: lo <= o["CREATED_AT"] < hi),)]


def week_cases(ws: int) -> list[tuple]:
    """(name, query, expected rows in SQL order) for weeks starting on the Python weekday ws."""
    this_week = first_day_of_week(sample.NOW, ws)
    week = dt.timedelta(days=7)
    during_day = dt.date(2025, 6, 5)  # a Thursday whose week holds 3, 4 or 5 orders for the starts above
    return [
        ("breakout-week", {"source-table": ORDERS, "aggregation": [["count"]],
                           "breakout": [f("ORDERS.CREATED_AT", temporal_unit="week")]},
         count_by(first_day_of_week(o["CREATED_AT"], ws) for o in R["ORDERS"])),
        ("date-breakout-week", {"source-table": PEOPLE, "aggregation": [["count"]],
                                "breakout": [f("PEOPLE.BIRTH_DATE", temporal_unit="week")]},
         count_by(first_day_of_week(p["BIRTH_DATE"], ws) for p in R["PEOPLE"])),
        ("breakout-day-of-week", {"source-table": ORDERS, "aggregation": [["count"]],
                                  "breakout": [f("ORDERS.CREATED_AT", temporal_unit="day-of-week")]},
         count_by(day_number(o["CREATED_AT"], ws) for o in R["ORDERS"])),
        ("breakout-week-of-year", {"source-table": ORDERS, "aggregation": [["count"]],
                                   "breakout": [f("ORDERS.CREATED_AT", temporal_unit="week-of-year")]},
         count_by(math.ceil(first_day_of_week(o["CREATED_AT"], ws).timetuple().tm_yday / 7) for o in R["ORDERS"])),
        # Every week number and day of the week Metabase's grammar has, on dates that cross New Year.
        ("week-and-day-extractions", {"source-table": PEOPLE, "expressions": {
            "iso": ["get-week", f("PEOPLE.BIRTH_DATE")], "iso mode": ["get-week", f("PEOPLE.BIRTH_DATE"), "iso"],
            "us": ["get-week", f("PEOPLE.BIRTH_DATE"), "us"], "instance": ["get-week", f("PEOPLE.BIRTH_DATE"), "instance"],
            "extract us": ["temporal-extract", f("PEOPLE.BIRTH_DATE"), "week-of-year-us"],
            "extract instance": ["temporal-extract", f("PEOPLE.BIRTH_DATE"), "week-of-year-instance"],
            "extract iso": ["temporal-extract", f("PEOPLE.BIRTH_DATE"), "week-of-year-iso"],
            "dow": ["get-day-of-week", f("PEOPLE.BIRTH_DATE")], "iso dow": ["get-day-of-week", f("PEOPLE.BIRTH_DATE"), "iso"],
            "extract dow": ["temporal-extract", f("PEOPLE.BIRTH_DATE"), "day-of-week"],
            "extract iso dow": ["temporal-extract", f("PEOPLE.BIRTH_DATE"), "day-of-week-iso"]},
            "fields": [f("PEOPLE.ID"), *[["expression", name] for name in (
                "iso", "iso mode", "us", "instance", "extract us", "extract instance", "extract iso", "dow", "iso dow",
                "extract dow", "extract iso dow")]],
            "order-by": [["asc", f("PEOPLE.ID")]]},
         [(p["ID"], d.isocalendar()[1], d.isocalendar()[1], weeks_from_january(d, 6), weeks_from_january(d, ws),
           weeks_from_january(d, 6), weeks_from_january(d, ws), d.isocalendar()[1], day_number(d, ws), d.isoweekday(),
           day_number(d, ws), d.isoweekday())
          for p in sorted(R["PEOPLE"], key=lambda p: p["ID"]) for d in [p["BIRTH_DATE"]]]),
        ("filter-this-week", {"source-table": ORDERS, "aggregation": [["count"]],
                              "filter": ["time-interval", f("ORDERS.CREATED_AT"), "current", "week"]},
         orders_from(this_week, this_week + week)),
        ("filter-last-week", {"source-table": ORDERS, "aggregation": [["count"]],
                              "filter": ["time-interval", f("ORDERS.CREATED_AT"), "last", "week"]},
         orders_from(this_week - week, this_week)),
        ("filter-past-three-weeks-with-this", {"source-table": ORDERS, "aggregation": [["count"]],
                                               "filter": ["time-interval", f("ORDERS.CREATED_AT"), -3, "week",
                                                          {"include-current": True}]},
         orders_from(this_week - 3 * week, this_week + week)),
        ("filter-relative-interval-weeks", {"source-table": ORDERS, "aggregation": [["count"]],
                                            "filter": ["relative-time-interval", f("ORDERS.CREATED_AT"), -2, "week", -1, "week"]},
         orders_from(this_week - 3 * week, this_week - week)),
        ("filter-during-week", {"source-table": ORDERS, "aggregation": [["count"]],
                                "filter": ["during", f("ORDERS.CREATED_AT"), during_day.isoformat(), "week"]},
         orders_from(first_day_of_week(during_day, ws), first_day_of_week(during_day, ws) + week)),
        ("filter-week-bucket-equals-relative", {"source-table": ORDERS, "aggregation": [["count"]],
                                                "filter": ["=", f("ORDERS.CREATED_AT", temporal_unit="week"),
                                                           ["relative-datetime", -2, "week"]]},
         orders_from(this_week - 2 * week, this_week - week)),
        ("filter-week-bucket-equals-date", {"source-table": ORDERS, "aggregation": [["count"]],
                                            "filter": ["=", f("ORDERS.CREATED_AT", temporal_unit="week"),
                                                       during_day.isoformat()]},
         orders_from(first_day_of_week(during_day, ws), first_day_of_week(during_day, ws) + week)),
        ("filter-first-day-of-week", {"source-table": ORDERS, "aggregation": [["count"]],
                                      "filter": ["=", f("ORDERS.CREATED_AT", temporal_unit="day-of-week"), 1]},
         [(orders_where(lambda o: o["CREATED_AT"].weekday() == ws),)]),
    ]


WEEK_CASE_NAMES = [c[0] for c in week_cases(6)]


def test_week_cases_depend_on_the_start_day():
    """Every case answers differently for a Monday and a Sunday start, and none is vacuous: a case the
    setting did not move could not catch the compiler ignoring it."""
    by_start = {name: {c[0]: c[2] for c in week_cases(ws)} for name, ws in WEEK_STARTS.items()}
    for case in WEEK_CASE_NAMES:
        assert by_start["monday"][case] != by_start["sunday"][case], case
        for answers in by_start.values():
            assert answers[case] and answers[case] != [(0,)], case


@pytest.mark.parametrize("start", list(WEEK_STARTS))
@pytest.mark.parametrize("case", WEEK_CASE_NAMES)
def test_start_of_week(samples, start, case):
    ws = WEEK_STARTS[start]
    _, query, expected = next(c for c in week_cases(ws) if c[0] == case)
    want = [tuple(normal(v) for v in row) for row in expected]
    for engine in ENGINES:
        rows = run_case(samples[engine], query, week_start=ws)
        assert_rows_equal(rows, want, f"{case} starting {start} on {engine}")


# A zone with DST, a zone read from another, a fixed offset read from a named zone; the contrib drivers
# run (ClickHouse) or compile (Trino) it too.
NAMED_ZONES_QUERY = {"source-table": ORDERS, "expressions": {
    "new york": ["convert-timezone", f("ORDERS.CREATED_AT"), "America/New_York"],
    "tokyo from new york": ["convert-timezone", f("ORDERS.CREATED_AT"), "Asia/Tokyo", "America/New_York"],
    "india from berlin": ["convert-timezone", f("ORDERS.CREATED_AT"), "+05:30", "Europe/Berlin"]},
    "fields": [f("ORDERS.ID"), ["expression", "new york"], ["expression", "tokyo from new york"],
               ["expression", "india from berlin"]], "order-by": [["asc", f("ORDERS.ID")]]}


def named_zone_answers() -> list[tuple]:
    """NAMED_ZONES_QUERY's rows by Python's zoneinfo, in run_case's form."""
    from zoneinfo import ZoneInfo

    utc, new_york, tokyo, berlin = (ZoneInfo(z) for z in ("UTC", "America/New_York", "Asia/Tokyo", "Europe/Berlin"))

    def wall(value, source, target):
        return value.replace(tzinfo=source).astimezone(target).replace(tzinfo=None)

    rows = [(o["ID"], wall(o["CREATED_AT"], utc, new_york), wall(o["CREATED_AT"], new_york, tokyo),
             wall(o["CREATED_AT"], berlin, utc) + dt.timedelta(hours=5, minutes=30)) for o in R["ORDERS"]]
    return [tuple(normal(v) for v in row) for row in rows]


@pytest.mark.parametrize("engine", ENGINES)
def test_named_time_zones(samples, engine):
    """Named zones follow their rules (DST included): the engine's zone database, Python's zoneinfo on SQLite;
    MySQL answers NULL when the server's time zone tables are not loaded (as Metabase's does)."""
    from zoneinfo import ZoneInfo

    utc, new_york = ZoneInfo("UTC"), ZoneInfo("America/New_York")
    assert {o["CREATED_AT"].replace(tzinfo=utc).astimezone(new_york).utcoffset() for o in R["ORDERS"]} == {
        dt.timedelta(hours=-4), dt.timedelta(hours=-5)}, "the data crosses a DST change"
    sample_db = samples[engine]
    rows = run_case(sample_db, NAMED_ZONES_QUERY)
    if engine == "mysql" and sample_db.run("SELECT CONVERT_TZ('2024-01-01 00:00:00', 'UTC', 'Asia/Tokyo')")[0][0] is None:
        assert all(row[1:] == (None, None, None) for row in rows)
        return
    assert_rows_equal(rows, named_zone_answers(), f"named zones on {engine}")


@pytest.mark.parametrize("engine", ENGINES)
def test_synced_metadata_feeds_the_compiler(samples, engine):
    """The table above runs on metadata written by sync: what the compiler relies on is there."""
    from core.appdb.models.database import Field

    sample_db = samples[engine]
    ids = sample_db.ids

    def field(ref):
        return sample_db.session.get(Field, ids[ref])

    total = field("$ORDERS.TOTAL")
    assert total.base_type == "type/Float"
    number = total.fingerprint["type"]["type/Number"]
    assert (number["min"], number["max"]) == (min(o["TOTAL"] for o in R["ORDERS"]), max(o["TOTAL"] for o in R["ORDERS"]))
    assert field("$ORDERS.PRODUCT_ID").fk_target_field_id == ids["$PRODUCTS.ID"]
    assert field("$PEOPLE.LATITUDE").semantic_type == "type/Latitude"
    assert (field("$ORDERS.CREATED_AT").base_type, field("$PEOPLE.BIRTH_DATE").base_type) == ("type/DateTime", "type/Date")


# --------------------------------------------------------------------------------------------------
# Macros: segments and metric cards, expanded by core.query.macros and run on every engine
# --------------------------------------------------------------------------------------------------

BIG = 100


def _big(o) -> bool:
    return o["TOTAL"] > BIG


def _by_category(orders_rows, value):
    groups: dict = {}
    for o in orders_rows:
        groups.setdefault(PRODUCT[o["PRODUCT_ID"]]["CATEGORY"], []).append(o)
    return sorted(((k, *value(v)) for k, v in groups.items()), key=lambda r: (r[0] is not None, r[0]))


MACRO_DEFINITIONS = {
    "$$SEG_BIG": ("segment", {"filter": [">", f("ORDERS.TOTAL"), BIG]}),
    "$$SEG_BIG_FEW": ("segment", {"filter": ["and", ["segment", "$$SEG_BIG"], ["<=", f("ORDERS.QUANTITY"), 3]]}),
    "$$MET_BIG_REVENUE": ("metric", {"aggregation": [["sum", f("ORDERS.TOTAL")]], "filter": [">", f("ORDERS.TOTAL"), BIG]}),
    "$$MET_BIG_COUNT": ("metric", {"aggregation": [["count"]], "filter": ["segment", "$$SEG_BIG"]}),
    "$$MET_AVG_QTY": ("metric", {"aggregation": [["avg", f("ORDERS.QUANTITY")]]}),
}

MACRO_CASES = [
    ("segment-filter", {"source-table": ORDERS, "aggregation": [["count"]], "filter": ["segment", "$$SEG_BIG"]},
     [(orders_where(_big),)]),
    ("segment-in-segment", {"source-table": ORDERS, "aggregation": [["count"], ["sum", f("ORDERS.QUANTITY")]],
                            "filter": ["segment", "$$SEG_BIG_FEW"]},
     [(orders_where(lambda o: _big(o) and o["QUANTITY"] <= 3),
       sum(o["QUANTITY"] for o in R["ORDERS"] if _big(o) and o["QUANTITY"] <= 3))]),
    ("segment-in-count-where", {"source-table": ORDERS, "aggregation": [["count-where", ["segment", "$$SEG_BIG"]],
                                                                         ["count"]]},
     [(orders_where(_big), len(R["ORDERS"]))]),
    ("metric-filtered-sum-by-category", {
        "source-table": ORDERS, "aggregation": [["metric", "$$MET_BIG_REVENUE"], ["count"]],
        "breakout": [fk("PRODUCTS.CATEGORY", "ORDERS.PRODUCT_ID")]},
     _by_category(R["ORDERS"], lambda rows: (sum(o["TOTAL"] for o in rows if _big(o)) if any(map(_big, rows)) else None,
                                             len(rows)))),
    ("metric-count-with-segment-filter", {"source-table": ORDERS, "aggregation": [["metric", "$$MET_BIG_COUNT"]]},
     [(orders_where(_big),)]),
    ("metric-unfiltered-with-query-filter", {"source-table": ORDERS, "aggregation": [["metric", "$$MET_AVG_QTY"]],
                                             "filter": ["segment", "$$SEG_BIG"]},
     [(sum(o["QUANTITY"] for o in R["ORDERS"] if _big(o)) / orders_where(_big),)]),
]


@pytest.fixture(scope="module")
def macro_samples(samples):
    """Per engine: the segments and metric cards of MACRO_DEFINITIONS over that engine's ORDERS,
    their ids added to the engine's template ids."""
    from core.appdb.models import Card, Segment, User

    session = samples["sqlite"].session
    creator = User(email="macros@example.com", first_name="Mac", last_name="Ros")
    session.add(creator)
    session.flush()
    for sample_db in samples.values():
        ids = sample_db.ids
        for key, (kind, definition) in MACRO_DEFINITIONS.items():
            resolved = sample.resolve(definition, ids)
            if kind == "segment":
                row = Segment(name=key, table_id=ids[ORDERS], definition=resolved, creator_id=creator.id)
            else:
                query = {"database": ids["database"], "type": "query", "query": {"source-table": ids[ORDERS], **resolved}}
                row = Card(name=key, display="scalar", type="metric", dataset_query=query, creator_id=creator.id,
                           database_id=ids["database"], table_id=ids[ORDERS], query_type="query")
            session.add(row)
            session.flush()
            ids[key] = row.id
    session.commit()
    return samples


@pytest.mark.parametrize("case", MACRO_CASES, ids=[c[0] for c in MACRO_CASES])
def test_macro_conformance(macro_samples, case):
    name, query, expected = case
    want = [tuple(normal(v) for v in row) for row in expected]
    assert want and want[0][0] not in (None, 0), f"{name}: the expected answer tests nothing"
    for engine in ENGINES:
        rows = run_case(macro_samples[engine], query)
        assert_rows_equal(rows, want, f"{name} on {engine}")


# --------------------------------------------------------------------------------------------------
# Remaps: Dimensions (core.query.remaps) on every engine
# --------------------------------------------------------------------------------------------------

QUANTITY_NAMES = {1: "one", 2: "two"}


@pytest.fixture(scope="module")
def remap_samples(samples):
    """Per engine: ORDERS.PRODUCT_ID shown as PRODUCTS.TITLE (external), ORDERS.QUANTITY 1 and 2 named
    (internal; other quantities unnamed). Removed again afterwards."""
    from core.appdb.models import Dimension, FieldValues

    session = samples["sqlite"].session
    rows = []
    for sample_db in samples.values():
        ids = sample_db.ids
        rows += [Dimension(field_id=ids["$ORDERS.PRODUCT_ID"], name="Product", type="external",
                           human_readable_field_id=ids["$PRODUCTS.TITLE"]),
                 Dimension(field_id=ids["$ORDERS.QUANTITY"], name="Quantity name", type="internal")]
        values = session.query(FieldValues).filter_by(field_id=ids["$ORDERS.QUANTITY"], type="full").one_or_none()
        if values is None:
            values = FieldValues(field_id=ids["$ORDERS.QUANTITY"], type="full", hash_key="")
            rows.append(values)
        values.values, values.human_readable_values = list(QUANTITY_NAMES), list(QUANTITY_NAMES.values())
    session.add_all(rows)
    session.commit()
    yield samples
    for row in rows:
        session.delete(row)
    session.commit()


def run_remapped(sample_db, query) -> tuple[list[dict], list[tuple]]:
    """Compiled with the external remapper and run; internal remaps added to the rows as the processor does."""
    from core.query.remaps import (
        Dimensions,
        ExternalRemaps,
        internal_remaps,
        with_internal_columns,
        with_internal_values,
    )

    normalized = normalize(sample.resolve({"database": "$db", "type": "query", "query": query}, sample_db.ids))
    dimensions = Dimensions(sample_db.session)
    compiled = compile_query(sample_db.session, normalized, sample_db.driver, now=sample.NOW,
                             remapper=ExternalRemaps(dimensions, normalized.stages))
    cols = compiled.columns
    internals = internal_remaps(sample_db.session, dimensions, cols)
    rows = list(with_internal_values(sample_db.run(compiled.sql, compiled.params), internals))
    return with_internal_columns(cols, internals), [tuple(normal(v) for v in row) for row in rows]


REMAP_CASES = [
    ("fields", {"source-table": ORDERS, "fields": [f("ORDERS.ID"), f("ORDERS.PRODUCT_ID"), f("ORDERS.QUANTITY")],
                "order-by": [["asc", f("ORDERS.ID")]]}, True,
     ["ID", "PRODUCT_ID", "QUANTITY", "TITLE", "Quantity name"],
     [(o["ID"], o["PRODUCT_ID"], o["QUANTITY"], PRODUCT[o["PRODUCT_ID"]]["TITLE"], QUANTITY_NAMES.get(o["QUANTITY"]))
      for o in sorted(R["ORDERS"], key=lambda o: o["ID"])]),
    ("breakout", {"source-table": ORDERS, "breakout": [f("ORDERS.PRODUCT_ID")],
                  "aggregation": [["count"], ["sum", f("ORDERS.QUANTITY")]]}, False,
     ["TITLE", "PRODUCT_ID", "count", "sum"],
     [(PRODUCT[p]["TITLE"], p, len(rows), sum(o["QUANTITY"] for o in rows))
      for p, rows in grouped(lambda o: o["PRODUCT_ID"]).items()]),
    ("sorted-by-title", {"source-table": ORDERS, "fields": [f("ORDERS.ID"), f("ORDERS.PRODUCT_ID")],
                         "order-by": [["desc", f("ORDERS.PRODUCT_ID")], ["asc", f("ORDERS.ID")]]}, False,
     ["ID", "PRODUCT_ID", "TITLE"],
     [(o["ID"], o["PRODUCT_ID"], PRODUCT[o["PRODUCT_ID"]]["TITLE"]) for o in R["ORDERS"]]),
]


@pytest.mark.parametrize("case", REMAP_CASES, ids=[c[0] for c in REMAP_CASES])
def test_remap_conformance(remap_samples, case):
    name, query, ordered, names, expected = case
    want = sorted((tuple(normal(v) for v in row) for row in expected), key=sort_key)
    results = {}
    for engine in ENGINES:
        cols, rows = run_remapped(remap_samples[engine], query)
        assert [c["name"] for c in cols] == names, f"{name} on {engine}"
        assert any(c.get("remapped_from") for c in cols) and any(c.get("remapped_to") for c in cols)
        results[engine] = rows
        assert_rows_equal(sorted(rows, key=sort_key), want, f"{name} on {engine} vs Python")
    reference = results["sqlite"]
    for engine, rows in results.items():
        if ordered:
            assert_rows_equal(rows, reference, f"{name}: {engine} vs sqlite")
        elif name == "sorted-by-title":
            # Ordered by title (each engine's collation), equal titles together, by ID within a title.
            titles = [row[2] for row in rows]
            assert len(set(titles)) == len([t for i, t in enumerate(titles) if i == 0 or titles[i - 1] != t])
            for t in set(titles):
                ids = [row[0] for row in rows if row[2] == t]
                assert ids == sorted(ids)


def test_unix_milliseconds_keep_their_milliseconds(samples):
    """A UNIX-milliseconds column reads as the same instant, milliseconds included, on every engine
    (the comparison elsewhere in this module drops fractions of a second)."""
    query = {"source-table": EVENTS, "fields": [f("EVENTS.ID"), f("EVENTS.AT_MILLIS")], "order-by": [["asc", f("EVENTS.ID")]]}
    want = [(e["ID"], e["MOMENT"] + dt.timedelta(milliseconds=e["AT_MILLIS"] % 1000)) for e in EV]
    assert any(moment.microsecond for _, moment in want), "the data has milliseconds"
    for engine in ENGINES:
        sample_db = samples[engine]
        normalized = normalize(sample.resolve({"database": "$db", "type": "query", "query": query}, sample_db.ids))
        compiled = compile_query(sample_db.session, normalized, sample_db.driver, now=sample.NOW)
        rows = [(int(i), v if isinstance(v, dt.datetime) else dt.datetime.fromisoformat(v))
                for i, v in sample_db.run(compiled.sql, compiled.params)]
        assert [(i, v.replace(tzinfo=None)) for i, v in rows] == want, engine
