"""Reports and traces on another machine, read over SSH (SFTP, paramiko): ``ssh://`` addresses,
the user's SSH config and known_hosts, lazy fetches into a local cache by checksum.

paramiko is imported only when a connection is made, so local use pays nothing for it.
"""

from profiler_core.remote.location import RemoteLocation, is_remote, parse_location, source_of
from profiler_core.remote.report import (
    RemoteReport,
    fetch_remote_trace,
    open_remote_report,
    open_source,
)

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
