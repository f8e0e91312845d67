"""Reports and traces on another machine, read over SSH (SFTP, paramiko): ``ssh://`` addresses,
the user's SSH config and known_hosts, lazy fetches into a local cache by checksum.

paramiko is imported only when a connection is made, so local use pays nothing for it; the
remote report and trace readers (and the report readers under them) only when one of them
is asked for, so telling an address from a path (``is_remote``) loads none of them.
"""

from typing import Any

from profiler_core.remote.location import RemoteLocation, is_remote, parse_location, source_of

__all__ = [
    "RemoteLocation",
    "RemoteReport",
    "fetch_remote_trace",
    "is_remote",
    "open_remote_report",
    "open_source",
    "parse_location",
    "source_of",
]

_FROM_REPORT = ("RemoteReport", "fetch_remote_trace", "open_remote_report", "open_source")


def __getattr__(name: str) -> Any:
    if name in _FROM_REPORT:
        from profiler_core.remote import report

        return getattr(report, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
