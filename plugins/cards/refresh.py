"""Refreshing persisted models on the persistence schedule (the `persisted-model-refresh-cron-schedule`
setting, Metabase's), one job per database with persistence on, run by core.schedule."""
from __future__ import annotations

from sqlalchemy import select

from core.appdb.models import Card, Database, PersistedInfo, User
from core.assembly.records import JobKind, JobRun
from core.http.errors import Invalid

from . import persistence

KIND = "persisted-model-refresh"
SETTING = "persisted-model-refresh-cron-schedule"
DEFAULT_CRON = "0 0 0/6 * * ? *"  # Metabase's default: every six hours
# Persisted (or failed, so that a fixed model recovers) copies; "off" and "deletable" are gone for good.
REFRESHED_STATES = ("persisted", "error")


def valid_cron(value):
    from core.schedule import CronError
    from core.schedule.cron import trigger

    try:
        trigger(value)
    except CronError as exc:
        raise Invalid({"value": f"not a valid cron schedule: {exc}"}) from exc
    return value


def _cron(session) -> str:
    from core.http.auth import tessera

    try:
        return tessera().settings.get(session, SETTING) or DEFAULT_CRON
    except KeyError:
        return DEFAULT_CRON


def _jobs(session) -> dict:
    cron = _cron(session)
    return {str(database_id): (cron, None, {"database_id": database_id})
            for database_id, settings in session.execute(select(Database.id, Database.settings))
            if (settings or {}).get("persist-models-enabled")}


def refresh(job: JobRun) -> dict:
    """Run every persisted model of the database again, as the user who persisted it."""
    session, counts = job.session, {"success": 0, "error": 0, "skipped": 0}
    infos = list(session.scalars(select(PersistedInfo).where(PersistedInfo.database_id == job.args["database_id"],
                                                             PersistedInfo.state.in_(REFRESHED_STATES))))
    for info in infos:
        card = session.get(Card, info.card_id)
        user = session.get(User, info.creator_id) if info.creator_id else None
        if card is None or card.archived or card.type != "model" or user is None or not user.is_active:
            counts["skipped"] += 1
            continue
        result = persistence.persist(session, user, card)
        counts["success" if result.state == "persisted" else "error"] += 1
    return counts


KINDS = [JobKind(KIND, refresh, task="persist-refresh", db_id=lambda args: args.get("database_id"), jobs=_jobs)]
