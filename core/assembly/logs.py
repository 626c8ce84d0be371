"""A ring buffer of recent log records, served to administrators by /api/util/logs."""
from __future__ import annotations

import collections
import datetime as dt
import logging
import threading


class RingBufferHandler(logging.Handler):
    def __init__(self, capacity: int = 2000):
        super().__init__(level=logging.INFO)
        self.records: collections.deque = collections.deque(maxlen=capacity)
        self._lock_buffer = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        entry = {
            "timestamp": dt.datetime.fromtimestamp(record.created, dt.timezone.utc).isoformat().replace("+00:00", "Z"),
            "level": record.levelname,
            "fqns": record.name,
            "msg": record.getMessage(),
            "exception": self.formatter.formatException(record.exc_info) if record.exc_info and self.formatter else None,
            "process_uuid": "nil",
        }
        with self._lock_buffer:
            self.records.append(entry)

    def recent(self) -> list[dict]:
        """Newest first, as Metabase's log endpoint returns them."""
        with self._lock_buffer:
            return list(reversed(self.records))


def install(capacity: int) -> RingBufferHandler:
    handler = RingBufferHandler(capacity)
    handler.setFormatter(logging.Formatter())
    logger = logging.getLogger("tessera")
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    return handler
