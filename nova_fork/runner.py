"""Run stestr in a materialized tree with the base's venv."""

import os
import subprocess

from nova_fork import venv

PATHS = {
    'functional': './nova/tests/functional',
    'unit': './nova/tests/unit',
}


def environ():
    env = dict(os.environ)
    # As nova's own tox.ini does.
    env.setdefault('OS_STDOUT_CAPTURE', '1')
    env.setdefault('OS_STDERR_CAPTURE', '1')
    env.setdefault('OS_LOG_CAPTURE', '1')
    env.setdefault('OS_TEST_TIMEOUT', '160')
    env.pop('PYTHONPATH', None)
    return env


def stestr(base, tree, args, path='functional', stdout=None):
    """Run ``stestr --test-path=PATH ARGS`` in tree; return the process."""
    python = venv.ensure(base)
    cmd = [str(python), '-m', 'stestr', '--test-path=%s' % PATHS[path]]
    cmd += list(args)
    return subprocess.run(cmd, cwd=tree, env=environ(), stdout=stdout)


def run(base, tree, stestr_args=(), path='functional'):
    """``stestr run``: the base's default selection unless args are given."""
    args = list(stestr_args)
    if not args:
        args = ['run'] + ['|'.join(base.tests)] if path == 'functional' \
            else ['run']
    elif args[0] not in ('run', 'last', 'failing', 'list', 'slowest'):
        args = ['run'] + args
    return stestr(base, tree, args, path=path).returncode
