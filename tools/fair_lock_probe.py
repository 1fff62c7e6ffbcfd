#!/usr/bin/env python3
"""Does the fair lock of each line's stack exclude spawn_n greenthreads?

nova-compute runs each build in a greenthread made by eventlet.spawn_n and
guards the resource tracker with a fair lock (COMPUTE_RESOURCE_SEMAPHORE).
With oslo.concurrency before 5.0.1 and fasteners 0.15 to 0.17, a fair lock
takes threading.current_thread() for its owner, which is the same native
thread for every spawn_n greenthread: they all enter it at once
(oslo.concurrency bug 1988311, fasteners issue 96).  This runs four
spawn_n greenthreads through one fair lock in each line's test venv and
says whether two held it at once, with the line's locked versions of
both libraries; it exits 1 if any did.

    python3 tools/fair_lock_probe.py [LINE ...]
"""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nova_fork import config  # noqa: E402
from nova_fork.env import novatox  # noqa: E402
from nova_fork.env import runtime  # noqa: E402
from nova_fork.env import venv  # noqa: E402

PROBE = '''
import eventlet
eventlet.monkey_patch()
from oslo_concurrency import lockutils
try:
    synchronized = lockutils.synchronized('compute_resources', fair=True)
except TypeError:
    print('no fair locks')
    raise SystemExit(0)
inside, overlap = [], []

@synchronized
def critical(n):
    inside.append(n)
    overlap.extend([tuple(inside)] if len(inside) > 1 else [])
    eventlet.sleep(0.01)
    inside.remove(n)

for n in range(4):
    eventlet.spawn_n(critical, n)
eventlet.sleep(0.2)
print('SHARED' if overlap else 'exclusive')
'''


def main():
    lines = sys.argv[1:] or list(config.load_bases(ROOT))
    shared = []
    for line in lines:
        base = config.get_base(ROOT, line)
        python = venv.ensure(base)
        out = runtime.run(base, [str(python), '-c', PROBE],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        result = out.stdout.decode().strip().splitlines()[-1:] or ['?']
        lock = base.lock.read_text()
        pins = ['%s==%s' % (name, novatox.pinned(lock, name))
                for name in ('fasteners', 'oslo.concurrency')
                if novatox.pinned(lock, name)]
        print('%-8s %-9s %s' % (line, result[0], ' '.join(pins)))
        if result[0] == 'SHARED':
            shared.append(line)
    if shared:
        sys.exit('fair lock shared by spawn_n greenthreads on: %s' %
                 ', '.join(shared))


if __name__ == '__main__':
    main()
