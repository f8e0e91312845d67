"""The tracks of an imported Chrome trace: processes, their threads, async tracks, and the
rows for process-scoped and global instants, in the order the trace asks for.

``process_sort_index`` / ``thread_sort_index`` metadata order the processes and the tracks
within each (ties keep the order of first appearance), as chrome://tracing does; the row of
global instants comes first, as Perfetto puts its global track above every process.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler_core.trace.model import Process, Thread

#: Track kinds beside a process's threads: async spans (per id), and instants scoped to
#: their process or to the whole trace.
ASYNC, PROCESS_ROW, GLOBAL_ROW = "async", "process", "global"
_KIND_ORDER = {"track": 0, "thread": 0, PROCESS_ROW: -1, ASYNC: 1}


class Tracks:
    """Process and track tables, filled as events name them."""

    def __init__(self) -> None:
        self.processes: dict[Any, int] = {}
        self.process_names: dict[int, str] = {}
        self.process_labels: dict[int, str] = {}  # said after the name: "python3 (GPU 0)"
        self.process_sort: dict[int, float] = {}
        self.keys: dict[tuple, int] = {}  # (kind, pid, ...) -> track
        self.names: dict[int, str] = {}
        self.kinds: dict[int, str] = {}
        self.thread_sort: dict[int, float] = {}
        self.owner: dict[int, int] = {}  # track -> process

    def process(self, pid: Any) -> int:
        return self.processes.setdefault(pid, len(self.processes))

    def track(self, key: tuple, kind: str, pid: Any, name: str) -> int:
        index = self.keys.get(key)
        if index is None:
            index = self.keys[key] = len(self.keys)
            self.owner[index] = self.process(pid)
            self.kinds[index] = kind
            self.names[index] = name
        return index

    def thread(self, pid: Any, tid: Any) -> int:
        return self.track(("thread", pid, tid), "thread", pid, f"Thread {tid}")

    def async_track(self, pid: Any, cat: str, id_: Any, name: str) -> int:
        return self.track(
            (ASYNC, pid, cat, id_), ASYNC, pid, f"{name} ({id_})" if name else str(id_)
        )

    def process_row(self, pid: Any) -> int:
        return self.track((PROCESS_ROW, pid), PROCESS_ROW, pid, "Process instants")

    def global_row(self, pid: Any) -> int:
        return self.track((GLOBAL_ROW,), GLOBAL_ROW, pid, "Global instants")

    def ordered(self, origin: int) -> tuple[list[Process], list[Thread], np.ndarray]:
        """Processes and tracks in display order, and each old track index's new one."""
        pids = list(self.processes)
        p_order = sorted(range(len(pids)), key=lambda p: (self.process_sort.get(p, 0), p))
        p_new = {old: new for new, old in enumerate(p_order)}
        processes = [
            Process(
                pids[p] if isinstance(pids[p], int | str) else -1,
                "",
                self._name(p, pids[p]),
                origin,
            )
            for p in p_order
        ]
        tracks = list(self.keys.items())
        t_order = sorted(
            range(len(tracks)),
            key=lambda t: (
                self.kinds[t] != GLOBAL_ROW,  # the global instants' row on top
                p_new[self.owner[t]],
                _KIND_ORDER.get(self.kinds[t], 2),
                self.thread_sort.get(t, 0),
                t,
            ),
        )
        threads = []
        for t in t_order:
            key, kind = tracks[t][0], self.kinds[t]
            os_tid = key[2] if kind == "thread" and isinstance(key[2], int) else None
            threads.append(Thread(self.names[t], p_new[self.owner[t]], os_tid, kind))
        new_index = np.empty(max(len(tracks), 1), np.int32)
        new_index[np.array(t_order, np.int64)] = np.arange(len(t_order), dtype=np.int32)
        return processes, threads, new_index

    def _name(self, process: int, pid: Any) -> str:
        name = self.process_names.get(process, _process_label(pid))
        labels = self.process_labels.get(process, "")
        return f"{name} ({labels})" if labels and labels not in name else name


def _process_label(pid: Any) -> str:
    return f"Process {pid}"
