"""Writes that a read causes (view counts, last-used times, expired login sessions): run after the response.

A GET must not commit inside its request: the commit ends the transaction the view reads in and clears
the request's permission cache (core.policy.permissions). A service queues such a write here as a Core
statement instead; when the request ends without an unhandled error, the queued statements run in one
transaction on a connection of their own, after the request's session is closed. Statements should be
relative (`view_count = view_count + 1`) so that concurrent requests do not lose each other's writes.
Outside a request (CLI, jobs) they run when the app context ends.
"""
from __future__ import annotations

import logging

from flask import g
from sqlalchemy.sql import Executable

from .db import app_db

log = logging.getLogger("tessera.deferred")


def after_response(statement: Executable) -> None:
    g.setdefault("deferred_writes", []).append(statement)


def run_deferred_writes(exc: BaseException | None = None) -> None:
    statements = g.pop("deferred_writes", None)
    if not statements or exc is not None:
        return
    try:
        with app_db().engine.begin() as conn:
            for statement in statements:
                conn.execute(statement)
    except Exception:  # bookkeeping only: the response has been produced and must not turn into a 500
        log.exception("could not run %d deferred writes", len(statements))
