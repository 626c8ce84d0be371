"""emit(): tell every track_event implementation that something changed. Call after the commit."""
from __future__ import annotations

import logging

from flask import current_app

from .records import Event

log = logging.getLogger("tessera.events")


def emit(topic: str, user_id: int | None = None, obj=None, **details) -> None:
    event = Event(topic=topic, user_id=user_id, object=obj, details=details)
    pm = current_app.extensions["tessera"].pm
    for impl in pm.hook.track_event.get_hookimpls():
        try:
            impl.function(event=event)
        except Exception:  # one listener's failure must not undo a committed change
            log.exception("track_event listener %s failed on %s", impl.plugin_name, topic)


def has_listeners() -> bool:
    """Whether any plugin listens: a read answered from core.appdb.memo has no object to pass them."""
    return bool(current_app.extensions["tessera"].pm.hook.track_event.get_hookimpls())
