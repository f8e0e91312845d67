"""Logging with Poplar's variables: ``POPLAR_LOG_LEVEL`` / ``POPLIBS_LOG_LEVEL`` (OFF, ERR,
WARN, INFO, DEBUG, TRACE) and ``POPLAR_LOG_DEST`` / ``POPLIBS_LOG_DEST`` (stdout, stderr
or a file name), through Python's ``logging``. Poplar messages start ``PO:``, PopLibs
messages ``PL:``; logging is off unless asked for, as in Poplar.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping

from ipu_engine.common.errors import OptionError

TRACE = 5
logging.addLevelName(TRACE, "TRACE")

LEVELS = {
    "OFF": logging.CRITICAL + 10,
    "ERR": logging.ERROR,
    "WARN": logging.WARNING,
    "INFO": logging.INFO,
    "DEBUG": logging.DEBUG,
    "TRACE": TRACE,
}

_LOGGERS = {"poplar": "POPLAR", "poplibs": "POPLIBS"}
_configured: dict[str, tuple[str, str]] = {}


def configure_logging(environ: Mapping[str, str] | None = None) -> None:
    """Apply the log variables; cheap to call again (only changes are applied)."""
    environ = os.environ if environ is None else environ
    for logger_name, prefix in _LOGGERS.items():
        level_text = environ.get(f"{prefix}_LOG_LEVEL", "OFF").strip().upper() or "OFF"
        dest = environ.get(f"{prefix}_LOG_DEST", "stderr").strip() or "stderr"
        if _configured.get(logger_name) == (level_text, dest):
            continue
        if level_text not in LEVELS:
            raise OptionError(
                f"{prefix}_LOG_LEVEL={level_text!r} is not a log level; use one of "
                f"{', '.join(LEVELS)}"
            )
        logger = logging.getLogger(logger_name)
        for handler in list(logger.handlers):
            if getattr(handler, "_from_env", False):
                logger.removeHandler(handler)
                handler.close()
        logger.setLevel(LEVELS[level_text])
        logger.propagate = False
        if level_text != "OFF":
            logger.addHandler(_handler(dest, prefix))
        _configured[logger_name] = (level_text, dest)


def _handler(dest: str, prefix: str) -> logging.Handler:
    if dest == "stdout":
        handler: logging.Handler = logging.StreamHandler(sys.stdout)
    elif dest == "stderr":
        handler = logging.StreamHandler(sys.stderr)
    else:
        try:
            handler = logging.FileHandler(dest, mode="a", encoding="utf-8")
        except OSError as exc:
            raise OptionError(f"{prefix}_LOG_DEST: cannot open {dest!r}: {exc.strerror}") from None
    handler.setFormatter(
        logging.Formatter(
            "%(asctime)s.%(msecs)03d %(process)d %(levelname)s %(message)s", "%H:%M:%S"
        )
    )
    handler._from_env = True  # type: ignore[attr-defined]
    return handler
