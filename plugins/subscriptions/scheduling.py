"""Each enabled e-mail or webhook channel of a pulse that is not archived is one job of kind "send-pulse" on the
core scheduler (core.schedule), keyed by the channel id, its cron written from the channel's schedule
(core.sync.schedules.schedule_to_cron: the same Quartz strings as database sync schedules) in the
report time zone. Jobs change in the transaction that changes the pulse."""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.assembly.records import JobKind, JobRun
from core.outbound import mail
from core.schedule import schedule, scheduled, unschedule
from core.sync.schedules import schedule_to_cron

from . import retry, send
from .models import Pulse, PulseChannel
from .service import without_orphans

KIND = "send-pulse"


def cron_of(channel: PulseChannel) -> str:
    if channel.cron_schedule:
        return channel.cron_schedule
    return schedule_to_cron({"schedule_type": channel.schedule_type, "schedule_hour": channel.schedule_hour,
                             "schedule_day": channel.schedule_day, "schedule_frame": channel.schedule_frame})


def _wanted(pulse: Pulse, channels) -> dict[str, tuple[str, None, dict]]:
    if pulse.archived:
        return {}
    return {str(c.id): (cron_of(c), None, {"pulse_id": pulse.id, "channel_id": c.id})
            for c in channels if c.enabled and c.channel_type in ("email", "http")}


def reschedule(session: Session, pulse: Pulse) -> None:
    """Make the pulse's jobs match its channels (called after a create or an update, before commit)."""
    channels = session.scalars(select(PulseChannel).where(PulseChannel.pulse_id == pulse.id))
    wanted = _wanted(pulse, channels)
    for job in scheduled(session, KIND):
        if (job.args or {}).get("pulse_id") == pulse.id and job.key not in wanted:
            unschedule(session, KIND, job.key)
    for key, (cron, zone, args) in wanted.items():
        schedule(session, KIND, key, cron, zone, args)


def all_jobs(session: Session) -> dict:
    """Every job the stored pulses call for (the scheduler repairs its table to match at start)."""
    out: dict = {}
    live = without_orphans(session, list(session.scalars(select(Pulse).where(Pulse.archived.is_(False)))))
    pulses = {p.id: p for p in live}
    by_pulse: dict[int, list[PulseChannel]] = {}
    for channel in session.scalars(select(PulseChannel).where(PulseChannel.pulse_id.in_(list(pulses)))):
        by_pulse.setdefault(channel.pulse_id, []).append(channel)
    for pulse_id, channels in by_pulse.items():
        out.update(_wanted(pulses[pulse_id], channels))
    return out


def after_sent(session: Session, pulse_id) -> None:
    """An alert sent "first time only" (send_once) is archived and its jobs go, in the run's transaction."""
    pulse = session.get(Pulse, pulse_id) if pulse_id is not None else None
    if pulse is not None and pulse.alert_first_only and not pulse.archived:
        pulse.archived = True
        session.flush()
        reschedule(session, pulse)


def run(job: JobRun) -> dict:
    """One occurrence; e-mail meeting a mail-server outage is retried, and the attempts are recorded in
    the task history whether the run succeeds or gives up."""
    deliver = retry.Retrying(mail.send, retry.Backoff.of(job.app.config))
    ids = {"pulse_id": job.args.get("pulse_id"), "channel_id": job.args.get("channel_id")}
    try:
        outcome = send.send_channel(job.session, job.app.extensions["tessera"].settings, int(job.args["channel_id"]),
                                    deliver)
    except mail.MailError as exc:
        exc.task_details = {**ids, **deliver.report()}  # core.schedule.runner records it with the failure
        raise
    if outcome.sent:
        after_sent(job.session, job.args.get("pulse_id"))
    return {**ids, "sent": outcome.sent, "recipients": outcome.recipients, "skipped": outcome.reason or None,
            **(deliver.report() if deliver.errors else {})}


JOB_KIND = JobKind(KIND, run, task="send-pulse", jobs=all_jobs)
