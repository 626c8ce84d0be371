"""A native question's plain `date` template tag (not a field filter): the API takes one date (or
date-time) for it and refuses ranges and relative dates, as Metabase's substitution does, so its widget
offers "On a date" alone (question_params.TAG_PARAMETER_TYPES: date/single)."""
from __future__ import annotations

import re

from tests.plugins.app.test_pages import sign_in, text
from tests.plugins.app.test_question_pages import SALES, cells, column, ok, shop  # noqa: F401 (a fixture)


def test_a_plain_date_tag_offers_one_date_as_the_api_takes(app, admin, shop):  # noqa: F811
    card = ok(admin.get(f"/api/card/{shop['native']}"))
    day = {"type": "date/single", "target": ["variable", ["template-tag", "day"]]}

    def run(value):
        return admin.post("/api/dataset", json={**card["dataset_query"], "parameters": [{**day, "value": value}]})

    taken = ok(run("2024-01-05"))
    assert [row[0] for row in taken["data"]["rows"]] == [i for i, _, _, d in SALES if d == "2024-01-05"]
    for refused in ("past30days", "2024-01-03~2024-01-05", "thismonth", "2024-01", "Q1-2024"):
        answer = run(refused)
        assert answer.status_code in (202, 400) and answer.json["status"] == "failed", refused

    page = text(sign_in(app).get(f"/question/{shop['native']}?day=2024-01-05"))
    assert column(cells(page), 0, int) == [i for i, _, _, d in SALES if d == "2024-01-05"]
    widget = re.search(r'<fieldset class="filter filter-date" data-date data-slug="day">(.*?)</fieldset>', page, re.S)
    modes = re.findall(r'<option value="([a-z]*)"', widget.group(1).split("</select>", 1)[0])
    assert modes == ["", "on"]
