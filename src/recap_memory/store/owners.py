"""Who holds a compaction lease: ``host:pid:start``, so a process can tell a lease its dead
predecessor on the same machine left behind from one a live process holds.

``start`` is when the kernel started the process (Linux's ``/proc``; ``-`` where that is
unknown), so a pid reused by a newer process — a container's server restarted as pid 1 —
is not mistaken for the holder. Leases of other hosts are never judged here: they expire
(a short lease, renewed while its pass runs).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

UNKNOWN_START = "-"


def lease_owner() -> str:
    """This process's name on the leases it takes: ``host:pid:start``."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_started(pid) or UNKNOWN_START}"


def is_orphaned(owner: str) -> bool:
    """Whether ``owner`` names a process of this machine that is gone: its pid no longer
    runs, or runs a process started at another time. False for other hosts, for owners
    not of this form, and where processes cannot be checked safely (not POSIX)."""
    host, pid_text, start = [*owner.split(":"), "", ""][:3]
    if os.name != "posix" or host != socket.gethostname() or not pid_text.isdigit():
        return False
    if owner == lease_owner():
        return False
    pid = int(pid_text)
    if not _running(pid):
        return True
    started = _started(pid)
    return start != UNKNOWN_START and started is not None and started != start


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie, killed but not yet reaped, is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        pass
    return _state(pid) not in ("Z", "X")


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (None without ``/proc``)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rpartition(")")[2].split()


def _state(pid: int) -> str | None:
    fields = _stat(pid)
    return fields[0] if fields else None


def _started(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (field 22 of its stat)."""
    fields = _stat(pid)
    return fields[19] if fields and len(fields) > 19 else None
