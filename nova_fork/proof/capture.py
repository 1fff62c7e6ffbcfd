"""Keep the guest XML that nova's libvirt driver writes in a test run.

The line's regression modules run in a materialized tree with the line's
venv python and ``scripts/capture_guests.py``, which writes every domain
XML nova hands to libvirt (and every device it attaches) before the fake
connection sees it.  Captures are cached by the tree's commit id, the lock
and the script, as ``prove`` caches results.
"""

import hashlib
import json
import os
import pathlib
import shutil
import subprocess

from nova_fork.env import runner
from nova_fork.env import runtime
from nova_fork.env import venv
from nova_fork import errors
from nova_fork import progress
from nova_fork.tree import build

SCRIPT = (pathlib.Path(__file__).parent.parent / 'scripts' /
          'capture_guests.py')
INDEX = 'guests.json'
LOG = 'run.log'


def folder(base, tree):
    """build/guests/KEY: where the capture of tree is kept."""
    head = build.gitutils.out(tree, 'rev-parse', 'HEAD')
    key = hashlib.sha256((head + base.lock.read_text() +
                          SCRIPT.read_text()).encode()).hexdigest()
    return build.build_dir(base.root) / 'guests' / key[:20]


def capture(base, tree, tests=None):
    """Run tests (the regression modules) in tree; return the capture.

    The capture is {'records': [record], 'tests': {test id: outcome},
    'folder': path}; each record has the XML as ``xml``.
    """
    out = folder(base, tree)
    cached = (out / INDEX).is_file()
    if not cached:
        venv.ensure(base)
    step = progress.Step()
    if not cached:
        _run(base, tree, out, list(tests or base.regression))
    taken = load(out)
    step.done('capture: %s, %d guest XML%s of %d tests%s' % (
        progress.where(tree, base.root), len(taken['records']),
        '' if len(taken['records']) == 1 else 's', len(taken['tests']),
        ' (cached)' if cached else ''))
    return taken


def _run(base, tree, out, tests):
    python = venv.ensure(base)
    partial = out.with_name(out.name + '.partial')
    shutil.rmtree(partial, ignore_errors=True)
    partial.parent.mkdir(parents=True, exist_ok=True)
    log = out.with_name(out.name + '.log')
    with open(log, 'wb') as f:
        proc = runtime.run(
            base, [str(python), str(SCRIPT), str(partial)] + tests,
            cwd=tree, env=runner.environ(python, base.setenv),
            stdout=f, stderr=subprocess.STDOUT)
    if proc.returncode or not (partial / INDEX).is_file():
        raise errors.TestFailure(
            'capturing the guests of %s in %s failed (exit %d); the run\'s '
            'output is in %s' % (' '.join(tests), tree, proc.returncode,
                                 log))
    shutil.move(str(log), str(partial / LOG))
    os.replace(partial, out)


def load(out):
    """The capture kept in folder out, each record with its XML."""
    out = pathlib.Path(out)
    capture = json.loads((out / INDEX).read_text())
    for record in capture['records']:
        record['xml'] = (out / record['file']).read_text()
    capture['folder'] = str(out)
    return capture
