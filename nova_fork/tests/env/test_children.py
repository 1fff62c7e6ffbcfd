import os
import signal
import subprocess
import sys
import time

import testtools

from nova_fork.env import children

# a child that starts a grandchild in a session of its own (as a Debian
# root's run does), and one that ignores SIGTERM; both print their pids
SCRIPT = '''
import signal, subprocess, sys, time
kind = sys.argv[1]
if kind == 'stubborn':
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
grandchild = subprocess.Popen(['sleep', '300'], start_new_session=True)
print(grandchild.pid, flush=True)
time.sleep(300)
'''


def alive(pid):
    try:
        with open('/proc/%d/stat' % pid) as stat:
            return stat.read().rpartition(')')[2].split()[0] != 'Z'
    except OSError:
        return False


class ChildrenTest(testtools.TestCase):

    def start(self, kind):
        proc = subprocess.Popen([sys.executable, '-c', SCRIPT, kind],
                                stdout=subprocess.PIPE, text=True)
        self.addCleanup(proc.wait)
        self.addCleanup(proc.stdout.close)
        return proc, int(proc.stdout.readline())

    def test_descendants(self):
        proc, grandchild = self.start('plain')
        self.addCleanup(children.stop, grace=0.5)
        found = children.descendants()
        self.assertIn(proc.pid, found)
        self.assertIn(grandchild, found)
        self.assertEqual([grandchild], children.descendants(proc.pid))

    def test_stop_every_descendant(self):
        procs = [self.start(kind) for kind in ('plain', 'stubborn')]
        start = time.monotonic()
        stopped = children.stop(grace=1.0)
        for proc, grandchild in procs:
            self.assertIn(proc.pid, stopped)
            self.assertIn(grandchild, stopped)
            proc.wait(timeout=5)
            self.assertFalse(alive(grandchild))
        # the stubborn one got SIGKILL after the grace period
        self.assertEqual(-signal.SIGKILL, procs[1][0].returncode)
        self.assertEqual(-signal.SIGTERM, procs[0][0].returncode)
        self.assertLess(time.monotonic() - start, 5)

    def test_sigterm_raises_terminated(self):
        proc, grandchild = self.start('plain')
        before = signal.getsignal(signal.SIGTERM)
        with children.sigterm_stops_children():
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                # the handler runs between two bytecodes
                for _ in range(100):
                    time.sleep(0.01)
            except children.Terminated:
                pass
            else:
                self.fail('SIGTERM raised nothing')
        proc.wait(timeout=5)
        self.assertFalse(alive(grandchild))
        self.assertEqual(before, signal.getsignal(signal.SIGTERM))
