"""Log lines of `rasplay serve` and `rasplay worker`: every line with its UTC timestamp, as text or (with
--log-format json) as one JSON object per line; uvicorn's own lines go the same way. The access log
(--access-log) is the `rasplay.access` logger, written at INFO whatever --log-level says."""
from __future__ import annotations

import logging
import logging.config
import time

import orjson

ACCESS = "rasplay.access"
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class UtcFormatter(logging.Formatter):
    converter = time.gmtime

    def formatTime(self, record, datefmt=None) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S", self.converter(record.created)) + f".{int(record.msecs):03d}Z"


class JsonFormatter(UtcFormatter):
    """{"time", "level", "logger", "message"} plus the record's `fields` (extra={"fields": {...}}), and the
    traceback as "exception" where there is one."""

    def format(self, record) -> str:
        doc = {"time": self.formatTime(record), "level": record.levelname, "logger": record.name,
               "message": record.getMessage()}
        doc.update(getattr(record, "fields", None) or {})
        if record.exc_info:
            doc["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(doc, default=str).decode()


def config(level: str = "warning", json_lines: bool = False, access_log: bool = False) -> dict:
    """A logging.config.dictConfig for this process (also given to uvicorn as its log_config)."""
    formatter = {"()": JsonFormatter} if json_lines else {"()": UtcFormatter, "format": TEXT_FORMAT}
    level = level.upper()
    return {
        "version": 1, "disable_existing_loggers": False,
        "formatters": {"rasplay": formatter},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "rasplay", "stream": "ext://sys.stderr"}},
        "root": {"handlers": ["stderr"], "level": level},
        "loggers": {
            "uvicorn": {"handlers": [], "level": level, "propagate": True},
            "uvicorn.error": {"handlers": [], "level": level, "propagate": True},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": True},   # ours is rasplay.access
            ACCESS: {"handlers": [], "level": "INFO" if access_log else "WARNING", "propagate": True},
        },
    }


def configure(level: str = "warning", json_lines: bool = False, access_log: bool = False) -> dict:
    settings = config(level, json_lines, access_log)
    logging.config.dictConfig(settings)
    return settings
