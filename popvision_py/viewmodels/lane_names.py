"""The names on the System Trace's lanes, Qt-free: each track's title, and what a thread's
deeper lanes say, so no lane is left without a name.

A title is the track's name, with its thread id when two threads of a process share a name
(TensorFlow's four ``tf_Compute`` threads), after its process's name when that is what
tells lanes apart: several processes, or a Chrome trace whose process names the
machine and device (TensorFlow's ``/host:CPU``, Kineto's ``python3.10 (GPU 0)``). A
.pvti's one process is the program the window already names; a Chrome trace's unnamed
one ("Process 1") says nothing.
"""

from __future__ import annotations

from collections import Counter

from profiler_core.trace.model import Trace


def track_titles(trace: Trace) -> list[str]:
    """Each thread's (track's) lane title, by thread index."""
    named = len(trace.processes) > 1 or (trace.tracks_in_order and _named(trace))
    shared = Counter((t.process, t.name) for t in trace.threads if t.kind == "thread")
    titles = []
    for t in trace.threads:
        name = t.name
        if (
            t.kind == "thread"
            and shared[(t.process, t.name)] > 1
            and t.os_tid is not None
            and str(t.os_tid) not in name
        ):
            name = f"{name} {t.os_tid}"
        if t.kind == "async":
            name = f"async · {name}"
        if named and t.kind != "global":  # the global instants' row belongs to no process
            name = f"{trace.processes[t.process].name} · {name}"
        titles.append(name)
    return titles


def _named(trace: Trace) -> bool:
    """A Chrome trace (``tracks_in_order``) whose one process has a name of its own, not
    the importer's default "Process <pid>"."""
    return any(p.name != f"Process {p.pid}" for p in trace.processes)


def deeper_lane_name(depth: int) -> str:
    """The name of the lane drawing a thread's spans at ``depth`` (> 0), under the lane
    with the thread's title: short, so the name column stays as wide as the titles."""
    return f"↳ depth {depth}"
