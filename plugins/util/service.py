"""Utility logic: system information, usage statistics, pool diagnostics, entity-id lookup."""
from __future__ import annotations

import logging
import platform
import secrets
import sys
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.appdb.models import Base

log = logging.getLogger("tessera.feedback")


def random_token() -> str:
    return secrets.token_hex(32)


def entity_models() -> dict[str, type]:
    """Every app-DB model with an entity_id, by its API model name (`__entity_type__` or table name)."""
    models = {}
    for mapper in Base.registry.mappers:
        cls = mapper.class_
        if "entity_id" in mapper.columns:
            models[getattr(cls, "__entity_type__", cls.__tablename__)] = cls
    return models


def translate_entity_ids(session: Session, entity_ids: dict[str, list[str]]) -> dict[str, dict]:
    models = entity_models()
    out: dict[str, dict] = {}
    for model_name, ids in entity_ids.items():
        cls = models.get(model_name)
        found = {}
        if cls is not None and ids:
            found = dict(session.execute(select(cls.entity_id, cls.id).where(cls.entity_id.in_(ids))).all())
        for eid in ids:
            if eid in found:
                out[eid] = {"id": found[eid], "type": model_name, "status": "ok"}
            else:
                out[eid] = {"type": model_name, "status": "not-found"}
    return out


def stats(session: Session) -> dict[str, Any]:
    """Counts of everything stored, with no names or contents: what an anonymous usage report holds."""
    counts: dict[str, Any] = {}
    for mapper in sorted(Base.registry.mappers, key=lambda m: m.class_.__tablename__):
        cls = mapper.class_
        counts[getattr(cls, "__entity_type__", cls.__tablename__)] = session.scalar(select(func.count()).select_from(cls))
    return counts


def bug_report_details(state, session: Session) -> dict:
    engine = state.db.engine
    return {
        "system-info": {
            "python.version": sys.version.split()[0],
            "python.implementation": platform.python_implementation(),
            "os.name": platform.system(),
            "os.version": platform.release(),
            "machine": platform.machine(),
        },
        "metabase-info": {
            "version": state.version,
            "run-mode": "prod",
            "application-database": engine.dialect.name,
            "application-database-details": {"database": {"name": engine.dialect.name,
                                                          "version": str(engine.dialect.server_version_info or "")}},
            "databases": sorted(state.drivers),
            "plugins": sorted(name for name, _ in state.pm.list_name_plugin()),
            "hosting-env": "unknown",
        },
    }


def pool_info(state) -> dict:
    """SQLAlchemy pool counts of the app DB and of every data-source engine the processor holds."""
    pools = {"app-db": state.db.engine}
    pools.update(state.extras.get("connection_pools", {}))
    info = {}
    for name, engine in pools.items():
        pool = engine.pool
        checked_out = pool.checkedout() if hasattr(pool, "checkedout") else 0
        idle = pool.checkedin() if hasattr(pool, "checkedin") else 0
        info[str(name)] = {
            "numConnections": checked_out + idle,
            "numIdleConnections": idle,
            "numBusyConnections": checked_out,
            "pool": pool.status(),
        }
    return {"connection-pools": info}


def record_feedback(comments: str | None, source: str, email: str | None) -> None:
    log.info("product feedback from %s (%s): %s", email or "anonymous", source, comments or "")
