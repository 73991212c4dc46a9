"""Structured (one JSON object per line) logs for the service.

>>> import logging
>>> rec = logging.LogRecord("veridic.service", logging.INFO, __file__, 1, "request", None, None)
>>> rec.fields = {"status": 200}
>>> import json
>>> d = json.loads(JsonFormatter().format(rec))
>>> d["level"], d["event"], d["status"]
('info', 'request', 200)
"""

from __future__ import annotations

import json
import logging
import sys
import time

__all__ = ["JsonFormatter", "configure_json_logging"]


class JsonFormatter(logging.Formatter):
    """Format a record as one JSON line: ts, level, logger, event, plus ``record.fields``."""

    def format(self, record: logging.LogRecord) -> str:
        out = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "event": record.getMessage(),
            "logger": record.name,
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            out.update(fields)
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


def configure_json_logging(level: str = "info", stream=None) -> None:
    """Send veridic's and uvicorn's logs to ``stream`` (stderr) as JSON lines. The CLI's job; the app never calls it."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    for name in ("veridic", "uvicorn", "uvicorn.error"):
        lg = logging.getLogger(name)
        lg.handlers[:] = [handler]
        lg.setLevel(level.upper())
        lg.propagate = False
    # The request log below replaces uvicorn's plain-text access log.
    logging.getLogger("uvicorn.access").disabled = True
