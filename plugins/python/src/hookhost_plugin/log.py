"""Logging in the shape the host reads: one hclog JSON object per line on
stderr, re-levelled by the host into its own log.

Python's ``logging`` levels map onto hclog's: DEBUG debug, INFO info,
WARNING warn, ERROR and CRITICAL error, anything below DEBUG trace. Fields
travel as the record's ``hookhost`` extra (a dict), which :class:`Logger`
fills from keyword arguments::

    log = hookhost_plugin.logger()
    log.warn("cache full", entries=1000)

Plain ``logging.getLogger(...)`` works too: under :func:`serve` the root
logger writes these lines.
"""

from __future__ import annotations

import datetime
import json
import logging
import sys
from typing import Any, Dict, Optional, TextIO

__all__ = ["HclogFormatter", "Logger", "logger", "install"]

# The plugin's name, which names the default logger; set by serve() and the
# test harness.
_plugin_name = "plugin"


def _level(levelno: int) -> str:
    if levelno >= logging.ERROR:
        return "error"
    if levelno >= logging.WARNING:
        return "warn"
    if levelno >= logging.INFO:
        return "info"
    if levelno >= logging.DEBUG:
        return "debug"
    return "trace"


class HclogFormatter(logging.Formatter):
    """Formats a record as one hclog JSON line (without the newline)."""

    def __init__(self, module: str, text: bool = False) -> None:
        super().__init__()
        self.module = module
        self.text = text

    def format(self, record: logging.LogRecord) -> str:
        """One line for ``record``."""
        ts = datetime.datetime.fromtimestamp(record.created, datetime.timezone.utc)
        module = self.module
        if record.name not in ("root", self.module, "hookhost_plugin"):
            module = self.module + "." + record.name
        entry: Dict[str, Any] = {
            "@level": _level(record.levelno),
            # go-plugin takes @message as a string, and drops the line otherwise.
            "@message": str(record.getMessage()),
            "@module": module,
            # The one layout go-plugin parses; any other makes the line plain text.
            "@timestamp": ts.strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z",
        }
        fields = getattr(record, "hookhost", None)
        if isinstance(fields, dict):
            for k, v in fields.items():
                if not str(k).startswith("@"):
                    entry[str(k)] = v
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if self.text:
            # For a person at a terminal (debug mode): hclog's text layout.
            fields = " ".join(
                "%s=%s" % (k, json.dumps(v, ensure_ascii=False, default=repr))
                for k, v in entry.items()
                if not k.startswith("@")
            )
            return "%s [%-5s] %s: %s%s" % (
                ts.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
                entry["@level"].upper(),
                module,
                entry["@message"],
                ": " + fields if fields else "",
            )
        try:
            return json.dumps(entry, ensure_ascii=False, default=repr)
        except ValueError:  # a circular field: log the message at least
            return json.dumps(
                {k: entry[k] for k in ("@level", "@message", "@module", "@timestamp")}
            )


class _StderrHandler(logging.StreamHandler):
    """Writes to the stderr the process started with, whatever sys.stderr
    becomes, and loses a line rather than raise when the host has gone."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream)

    def handleError(self, record: logging.LogRecord) -> None:
        """Drop the line: the host may be gone, and a log must not fail a call."""
        pass


_handler: Optional[logging.Handler] = None


def install(
    name: str, stream: Optional[TextIO] = None, level: int = logging.DEBUG, text: bool = False
) -> logging.Handler:
    """Make the root logger write hclog JSON lines (hclog's text lines with
    ``text``) named after the plugin to ``stream`` (the process's original
    stderr by default). Idempotent."""
    global _handler, _plugin_name
    _plugin_name = name
    root = logging.getLogger()
    if _handler is not None:
        root.removeHandler(_handler)
    if stream is None:
        stream = sys.__stderr__ or sys.stderr
    h = _StderrHandler(stream)
    h.setFormatter(HclogFormatter(name, text))
    root.addHandler(h)
    root.setLevel(level)
    _handler = h
    # gRPC's own debug chatter is not the plugin's.
    logging.getLogger("grpc").setLevel(logging.WARNING)
    return h


class Logger:
    """A logger whose methods take fields as keyword arguments:
    ``log.info("served", tool="x", ms=3)``. ``warn`` and ``warning`` are
    the same level."""

    def __init__(self, base: logging.Logger) -> None:
        self.base = base

    def _log(self, level: int, msg: str, fields: Dict[str, Any]) -> None:
        if self.base.isEnabledFor(level):
            exc_info = fields.pop("exc_info", None)
            self.base.log(level, "%s", msg, exc_info=exc_info, extra={"hookhost": fields})

    def trace(self, msg: str, **fields: Any) -> None:
        """Log at TRACE (below DEBUG)."""
        self._log(5, msg, fields)

    def debug(self, msg: str, **fields: Any) -> None:
        """Log at DEBUG."""
        self._log(logging.DEBUG, msg, fields)

    def info(self, msg: str, **fields: Any) -> None:
        """Log at INFO."""
        self._log(logging.INFO, msg, fields)

    def warn(self, msg: str, **fields: Any) -> None:
        """Log at WARN."""
        self._log(logging.WARNING, msg, fields)

    warning = warn

    def error(self, msg: str, **fields: Any) -> None:
        """Log at ERROR."""
        self._log(logging.ERROR, msg, fields)


def logger(name: Optional[str] = None) -> Logger:
    """The plugin's logger (named after the plugin), or a child named
    ``name``."""
    base = logging.getLogger(name or "hookhost_plugin")
    return Logger(base)
