"""Stop a command's child processes with it.

SIGTERM's default action ends the Python process alone: the processes it
started (tox, stestr and its workers, ``python -m subunit.run``) keep
running, orphaned.  ``sigterm_stops_children`` makes SIGTERM stop every
descendant of the process (SIGTERM, then SIGKILL to those still there
after a grace period) and raise ``Terminated`` in the main thread, which
unwinds as Ctrl-C does (partial files removed, one line said).

The descendants are read from /proc (Linux, as the rest of the tool), so
that grandchildren in a session of their own (a Debian root's) are
found too, and the parent's process group is never touched.
"""

import contextlib
import os
import signal
import time

# seconds a child has to end after SIGTERM, before SIGKILL
GRACE = 5.0


class Terminated(KeyboardInterrupt):
    """The process got SIGTERM (its children are stopped)."""


def _parents(proc='/proc'):
    """{pid: parent pid} of the processes alive (zombies left out)."""
    result = {}
    for entry in os.listdir(proc):
        if not entry.isdigit():
            continue
        try:
            with open(os.path.join(proc, entry, 'stat')) as stat:
                data = stat.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parens
        fields = data.rpartition(')')[2].split()
        if len(fields) > 1 and fields[0] != 'Z':
            result[int(entry)] = int(fields[1])
    return result


def descendants(pid=None):
    """The pids of the processes below pid (default: this one)."""
    pid = os.getpid() if pid is None else pid
    children = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _signal(pids, signum):
    for pid in pids:
        try:
            os.kill(pid, signum)
        except (ProcessLookupError, PermissionError):
            pass


def stop(pid=None, grace=GRACE):
    """SIGTERM every descendant, SIGKILL those left after grace seconds.

    Descendants that appear meanwhile (a parent starting another child as
    it ends) are stopped too.  Returns the pids signalled.
    """
    seen = set()
    deadline = time.monotonic() + grace
    while True:
        alive = set(_parents())
        new = [p for p in descendants(pid) if p not in seen]
        _signal(new, signal.SIGTERM)
        seen.update(new)
        left = seen & alive
        if not left or time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    left = seen & set(_parents())
    _signal(sorted(left), signal.SIGKILL)
    # SIGKILL is delivered at once, the process is gone a moment later
    deadline = time.monotonic() + 2.0
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left &= set(_parents())
    return sorted(seen)


def _on_sigterm(signum, frame):
    stop()
    raise Terminated()


@contextlib.contextmanager
def sigterm_stops_children():
    """Within the block, SIGTERM stops the children and raises Terminated.

    Only in the main thread, where Python runs signal handlers.
    """
    old = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)
