"""The Dask cluster a sweep runs on: a LocalCluster on this machine (one worker per core by
default), or an existing ``dask scheduler`` given by address.

The local workers are threads of this process: each run is a child process of its own, so a
worker only starts it and waits, and threads start in milliseconds where worker processes
take seconds. A scheduler that does not answer is a clear ``SweepError`` within the connect
timeout, not a hang.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from profiler_core.runs.errors import SweepError

CONNECT_SECONDS = 4.0
#: The local cluster's housekeeping, slowed: its workers are threads of this process that
#: start a run and wait, on cores the runs need. Nobody reads their statistical profile (no
#: dashboard), and the event loop's health tick and the system monitor need not wake up
#: 50 and 2 times a second (together ~4% of a core, measured over a sweep of sleeping runs).
QUIET_LOCAL_CLUSTER = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
}


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not Linux
        return max(os.cpu_count() or 1, 1)


@contextlib.contextmanager
def sweep_client(
    workers: int | None = None,
    scheduler: str | None = None,
    connect_seconds: float = CONNECT_SECONDS,
) -> Iterator[tuple[Any, str]]:
    """A ``distributed.Client`` and a description of its cluster, closed afterwards."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as error:  # pragma: no cover - a dependency of the package
        raise SweepError(f"the sweep needs dask[distributed] ({error})") from None
    # Dask's own logging names every worker and connection; the sweep says what matters.
    for name in ("distributed", "distributed.scheduler", "distributed.worker"):
        logging.getLogger(name).setLevel(logging.ERROR)
    if scheduler is not None:
        address = scheduler if "://" in scheduler else f"tcp://{scheduler}"
        _probe(address, connect_seconds)
        client = _connect(Client, address, connect_seconds)
        try:
            count = len(client.scheduler_info(n_workers=-1).get("workers", {}))
        except TypeError:  # older distributed: no n_workers
            count = len(client.scheduler_info().get("workers", {}))
        try:
            yield client, f"scheduler {address} ({count} worker(s))"
        finally:
            client.close()
        return
    count = workers or default_workers()
    if count < 1:
        raise SweepError(f"--workers must be at least 1, not {count}")
    import dask

    with dask.config.set(QUIET_LOCAL_CLUSTER):
        cluster = LocalCluster(
            n_workers=count,
            threads_per_worker=1,
            processes=False,
            dashboard_address=None,
        )
    client = Client(cluster, set_as_default=False)
    try:
        yield client, f"LocalCluster ({count} worker(s))"
    finally:
        client.close()
        cluster.close()


def _connect(client_class: Any, address: str, seconds: float) -> Any:
    """A client of the scheduler at ``address``, or a ``SweepError`` within ``seconds``.
    Dask's own timeout does not cover a server that accepts the connection and never
    answers (it waited forever), so the client is made on a thread of its own, given up on
    after the deadline (a daemon thread: it never holds the process's exit)."""
    made: dict[str, Any] = {}

    def connect() -> None:
        try:
            made["client"] = client_class(address, timeout=f"{seconds}s", set_as_default=False)
        except Exception as error:
            made["error"] = error

    thread = threading.Thread(target=connect, name="popvision-dask-connect", daemon=True)
    thread.start()
    thread.join(seconds + 0.5)
    if "client" in made:
        return made["client"]
    error = made.get("error")
    why = f"{type(error).__name__}: {error}" if error is not None else "no answer"
    raise SweepError(
        f"cannot reach the Dask scheduler at {address} within {seconds:g} s ({why}); is "
        "`dask scheduler` running there?"
    )


def _probe(address: str, seconds: float) -> None:
    """Fail at once when nothing listens at a ``tcp://`` address (Dask's client would retry
    until its timeout): a refused or unroutable connection is said with its reason."""
    parts = urlsplit(address)
    if parts.scheme != "tcp" or parts.hostname is None:
        return
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        raise SweepError(f"the scheduler address {address} has no port (e.g. 127.0.0.1:8786)")
    try:
        with socket.create_connection((parts.hostname, port), timeout=seconds):
            pass
    except OSError as error:
        reason = error.strerror or str(error) or type(error).__name__
        raise SweepError(
            f"cannot reach the Dask scheduler at {address} ({reason}); is `dask scheduler` "
            "running there?"
        ) from None
