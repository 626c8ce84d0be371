"""emit(): tell every track_event implementation that something changed. Call after the commit.

An implementation may declare the topics it follows (`following`): it is called for those only, and a
read that emits an event only when someone listens (GET /api/card/:id, GET /api/dashboard/:id: the
listeners receive the ORM object, which a read answered from core.appdb.memo does not load) asks
`has_listeners(topic)`, so a listener of other topics (plugins.subscriptions' system events) does not
take every card and dashboard read off the memo."""
from __future__ import annotations

import logging

from flask import current_app

from .records import Event

log = logging.getLogger("tessera.events")

FOLLOWS = "tessera_follows"  # on a track_event implementation's function: the topics it follows


def following(topics):
    """Decorates a track_event implementation with the topics it follows: an iterable of topics, or a
    callable taking the app's Tessera state and returning them (topics known once the app is built,
    such as the registered system events'). One without it follows every topic."""
    def mark(function):
        setattr(function, FOLLOWS, topics)
        return function
    return mark


def _follows(state, impl, topic: str) -> bool:
    topics = getattr(impl.function, FOLLOWS, None)
    if topics is None:
        return True
    return topic in (topics(state) if callable(topics) else topics)


def emit(topic: str, user_id: int | None = None, obj=None, **details) -> None:
    event = Event(topic=topic, user_id=user_id, object=obj, details=details)
    state = current_app.extensions["tessera"]
    for impl in state.pm.hook.track_event.get_hookimpls():
        if not _follows(state, impl, topic):
            continue
        try:
            impl.function(event=event)
        except Exception:  # one listener's failure must not undo a committed change
            log.exception("track_event listener %s failed on %s", impl.plugin_name, topic)


def has_listeners(topic: str) -> bool:
    """Whether any plugin follows `topic`: a read answered from core.appdb.memo has no object to pass them."""
    state = current_app.extensions["tessera"]
    return any(_follows(state, impl, topic) for impl in state.pm.hook.track_event.get_hookimpls())
