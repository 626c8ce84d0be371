"""A scheduled subscription's e-mail sent through a mail-server outage: each message is retried with
exponential back-off, as Metabase retries a channel send, and every failed attempt is kept for the run's
task history.

Only transient failures are retried (the server unreachable, a 4xx answer: core.outbound.mail.MailError
`transient`); a refusal or missing settings fail at once. Attempts: TESSERA_MAIL_RETRY_ATTEMPTS (7, as
Metabase's), the first retry after TESSERA_MAIL_RETRY_INITIAL_SECONDS (0.5), each next wait doubled with
up to 10 % jitter and at most 30 s, and no retry once a message has been tried for two minutes: a
scheduler thread waits about 32 s at worst with a refusing server, and never much more than two
minutes with one that does not answer. The back-off happens inside the run, not as a retry job: the
cards ran and the message is built, so only the send is repeated (a retry job would run the queries
again or have to store the message), and a later attempt still counts as the same occurrence.
"""
from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass

import tenacity

from core.outbound.mail import MailError

MULTIPLIER = 2.0
MAX_INTERVAL_SECONDS = 30.0
MAX_SECONDS_PER_MESSAGE = 120.0
JITTER = 0.1

log = logging.getLogger("tessera.subscriptions")


@dataclass(frozen=True)
class Backoff:
    attempts: int
    initial_seconds: float

    @classmethod
    def of(cls, config) -> Backoff:
        return cls(max(1, int(config.get("TESSERA_MAIL_RETRY_ATTEMPTS") or 1)),
                   max(0.0, float(config.get("TESSERA_MAIL_RETRY_INITIAL_SECONDS") or 0)))

    def describe(self) -> dict:
        return {"max_attempts": self.attempts, "initial_interval_seconds": self.initial_seconds,
                "multiplier": MULTIPLIER, "max_interval_seconds": MAX_INTERVAL_SECONDS}


class Retrying:
    """A mail.send with the same arguments that retries transient failures; `errors` lists every failed
    attempt ({message, timestamp}), oldest first, across the messages of one run."""

    def __init__(self, send_once, backoff: Backoff):
        self.send_once, self.backoff = send_once, backoff
        self.errors: list[dict] = []
        self.sent = 0

    def _failed(self, state: tenacity.RetryCallState) -> None:
        error = state.outcome.exception()
        self.errors.append({"message": str(error)[:500],
                            "timestamp": dt.datetime.now(dt.timezone.utc).isoformat().replace("+00:00", "Z")})
        log.warning("subscription e-mail attempt %d of %d failed: %s", state.attempt_number,
                    self.backoff.attempts, error)

    def __call__(self, *args, **kwargs) -> None:
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(lambda exc: isinstance(exc, MailError) and exc.transient),
            stop=tenacity.stop_after_attempt(self.backoff.attempts) | tenacity.stop_after_delay(MAX_SECONDS_PER_MESSAGE),
            wait=tenacity.wait_exponential(multiplier=self.backoff.initial_seconds, exp_base=MULTIPLIER,
                                           max=MAX_INTERVAL_SECONDS)
            + tenacity.wait_random(0, self.backoff.initial_seconds * JITTER),
            after=self._failed, reraise=True)
        retrying(self.send_once, *args, **kwargs)
        self.sent += 1

    def report(self) -> dict:
        """What the task history keeps of the retries (Metabase's channel-send keys)."""
        return {"retry_config": self.backoff.describe(), "attempted_retries": len(self.errors),
                "retry_errors": list(self.errors), "messages_sent": self.sent}
