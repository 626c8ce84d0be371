"""Each channel schedule becomes the scheduler's cron and fires when Metabase's would: weekly on its day,
monthly on the first/last (week)day or the 15th, in the report time zone."""
from __future__ import annotations

import datetime as dt

import pytest

from core.schedule import scheduled
from core.schedule.runner import run_due
from core.testing.app import set_setting

from .support import add_card, card_ref


def utc(*args) -> dt.datetime:
    return dt.datetime(*args, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize("channel,cron,fires", [
    ({"schedule_type": "hourly"}, "0 0 * * * ? *", utc(2026, 11, 26, 11)),
    ({"schedule_type": "daily", "schedule_hour": 18}, "0 0 18 * * ? *", utc(2026, 11, 26, 18)),
    ({"schedule_type": "weekly", "schedule_hour": 7, "schedule_day": "tue"}, "0 0 7 ? * 3 *", utc(2026, 12, 1, 7)),
    ({"schedule_type": "monthly", "schedule_hour": 6, "schedule_frame": "first", "schedule_day": "mon"},
     "0 0 6 ? * 2#1 *", utc(2026, 12, 7, 6)),
    ({"schedule_type": "monthly", "schedule_hour": 6, "schedule_frame": "first"}, "0 0 6 1 * ? *", utc(2026, 12, 1, 6)),
    ({"schedule_type": "monthly", "schedule_hour": 22, "schedule_frame": "last"}, "0 0 22 L * ? *",
     utc(2026, 11, 30, 22)),
    ({"schedule_type": "monthly", "schedule_hour": 22, "schedule_frame": "last", "schedule_day": "fri"},
     "0 0 22 ? * 6L *", utc(2026, 11, 27, 22)),
    ({"schedule_type": "monthly", "schedule_hour": 9, "schedule_frame": "mid"}, "0 0 9 15 * ? *",
     utc(2026, 12, 15, 9)),
])
def test_channel_schedule_fires_at_its_time(app, admin, warehouse, channel, cron, fires):
    card = add_card(admin, warehouse, "People")
    pulse = admin.post("/api/pulse", json={"name": "P", "cards": [card_ref(card)], "channels": [
        {"channel_type": "email", "enabled": True, "recipients": [], **channel}]})
    assert pulse.status_code == 200, pulse.json
    with app.app_context(), app.extensions["tessera"].db.session() as session:
        assert [j.cron for j in scheduled(session, "send-pulse")] == [cron]
    start = utc(2026, 11, 26, 10, 30)  # a Thursday
    assert run_due(app, start) == []
    assert run_due(app, fires - dt.timedelta(seconds=1)) == []
    assert len(run_due(app, fires)) == 1


def test_report_timezone_decides_the_hour(app, admin, warehouse):
    set_setting(app, "report-timezone", "Europe/Berlin")
    card = add_card(admin, warehouse, "People")
    admin.post("/api/pulse", json={"name": "P", "cards": [card_ref(card)], "channels": [
        {"channel_type": "email", "enabled": True, "schedule_type": "daily", "schedule_hour": 8}]})
    run_due(app, utc(2026, 11, 26, 0))
    assert run_due(app, utc(2026, 11, 26, 6, 59)) == []
    assert len(run_due(app, utc(2026, 11, 26, 7, 0))) == 1  # 08:00 in Berlin (UTC+1 in November)
