"""Run stestr in a materialized tree with the base's venv."""

import os
import pathlib

from nova_fork.env import runtime
from nova_fork.env import venv
from nova_fork import progress
from nova_fork.tree import detect

PATHS = {
    'functional': './nova/tests/functional',
    'unit': './nova/tests/unit',
}

STESTR_VERBS = ('run', 'last', 'failing', 'list', 'slowest', 'load')


def environ(python=None, setenv=()):
    env = dict(os.environ)
    # The base's own settings, as the setenv of its tox.ini.
    env.update(setenv)
    if python:
        # stestr runs its workers with the first python on PATH
        env['PATH'] = '%s%s%s' % (python.parent, os.pathsep, env['PATH'])
        env['VIRTUAL_ENV'] = str(python.parent.parent)
    # As nova's own tox.ini does.
    env.setdefault('OS_STDOUT_CAPTURE', '1')
    env.setdefault('OS_STDERR_CAPTURE', '1')
    env.setdefault('OS_LOG_CAPTURE', '1')
    env.setdefault('OS_TEST_TIMEOUT', '160')
    env.pop('PYTHONPATH', None)
    return env


def cache_bytecode(env, root):
    """Let the tests' Python keep the modules it compiles; env.

    Where PYTHONDONTWRITEBYTECODE is set (tox sets it), every stestr
    worker would compile nova and its dependencies from source again:
    most of a worker's start.  Python 3 keeps them under .cache/pycache
    (PYTHONPYCACHEPREFIX), out of the trees and the venvs; Python 2.7
    beside the sources.  A module whose source changed is compiled
    again (Python checks the source's time and size).
    """
    env.pop('PYTHONDONTWRITEBYTECODE', None)
    env['PYTHONPYCACHEPREFIX'] = str(pathlib.Path(root) / '.cache' /
                                     'pycache')
    return env


def stestr(base, tree, args, path='functional', stdout=None, stderr=None):
    """Run ``stestr --test-path=PATH ARGS`` in tree; return the process."""
    python = venv.ensure(base)
    # bin/stestr rather than python -m stestr, which old stestr lacks
    cmd = [str(python.parent / 'stestr'), '--test-path=%s' % PATHS[path]]
    cmd += list(args)
    env = cache_bytecode(environ(python, base.setenv), base.root)
    return runtime.run(base, cmd, cwd=tree, env=env, stdout=stdout,
                       stderr=stderr)


def run(base, tree, stestr_args=(), path='functional'):
    """``stestr run``: the base's default selection unless args are given.

    The default selection is the series' ``tests`` under the functional
    test path, then its ``unit_tests`` (if any) under the unit test path.
    """
    args = list(stestr_args)
    if args:
        if args[0] not in STESTR_VERBS:
            args = ['run'] + args
        return _timed(base, tree, args, path)
    if path == 'unit':
        return _timed(base, tree, ['run'], 'unit')
    code = _timed(base, tree, ['run', '|'.join(base.tests)], 'functional')
    if base.unit_tests:
        unit = _timed(base, tree, ['run', '|'.join(base.unit_tests)], 'unit')
        code = code or unit
    return code


def _timed(base, tree, args, path):
    """stestr's exit code; a run says on stderr how it ended, and when.

    The tests are stestr's to count: its summary is printed just above.
    """
    venv.ensure(base)
    step = progress.Step()
    code = stestr(base, tree, args, path=path).returncode
    if args[0] == 'run':
        step.done('stestr: %s, %s tests: %s' % (
            progress.where(tree, base.root), path,
            'exit %d' % code if code else 'passed'))
    return code


def our_python_files(base):
    """What the fork adds or changes under nova/: new files and patched."""
    files = set()
    for commit in base.commits():
        files.update(f for f in commit.files if f.endswith('.py'))
        if commit.is_patch:
            files.update(f for f in detect.patch_files(commit.path.read_text())
                         if f.endswith('.py'))
    return sorted(f for f in files if f.startswith('nova/'))


def lint(base, tree):
    """flake8 with the tree's own configuration and nova's local checks."""
    python = venv.ensure(base)
    files = our_python_files(base)
    return runtime.run(base, [str(python), '-m', 'flake8'] + files,
                       cwd=tree, env=environ(python, base.setenv)).returncode
