"""The test virtualenv of a base, installed from the project's lock file.

Made with uv where it can (an interpreter of Python 3.8 or newer on the
host), else with pip: the venv module, or virtualenv for Python 2.7, and
pip inside a Debian root.  NOVA_FORK_INSTALLER=pip or uv forces one.  A
venv is reused, whichever made it, while its lock file is unchanged.
"""

import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

from nova_fork.env import runtime
from nova_fork import errors
from nova_fork import progress
from nova_fork.tree import build
from nova_fork.tree import fetch

STAMP = 'nova-fork-lock.sha256'

# Nova's tests of these releases import pkg_resources, which setuptools
# dropped in release 81: keep the venv on a setuptools that still has it.
SETUPTOOLS = 'setuptools<70'

VIRTUALENV = runtime.VIRTUALENV
UV = 'uv>=0.4'
INSTALLERS = ('uv', 'pip')
# uv makes venvs for these interpreters and newer.
UV_PYTHON = (3, 8)

# What pip and uv say when PyPI cannot be reached.
NO_NETWORK = ('NewConnectionError', 'Temporary failure in name resolution',
              'dns error', 'failed to lookup address')


def _run(cmd, what, env=None):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, env=env)
    if proc.returncode:
        raise errors.ForkError('%s failed: %s' % (what, _tail(proc)))
    return proc.stdout


# pip's words around the cause of a failed build, which say nothing
GENERIC = ('subprocess-exited-with-error', 'metadata-generation-failed',
           'See above', 'originates from a subprocess',
           'an issue with the package')


def _tail(proc):
    """The cause of a failed command: the last line of its output, or,
    where that is one of pip's generic lines about a failed build, the
    first error line that names one (the package's own); its exit code
    when it printed nothing.
    """
    if any(s in proc.stdout for s in NO_NETWORK):
        return 'PyPI is not reachable (no network?)'
    lines = [s.strip() for s in proc.stdout.splitlines() if s.strip()]
    if not lines:
        return 'exit %d' % proc.returncode
    if any(g in lines[-1] for g in GENERIC):
        causes = [line for line in lines if 'error' in line.lower() and
                  not any(g in line for g in GENERIC)]
        if causes:
            return causes[0]
    return lines[-1]


def _build_env(base, folder):
    """The environment that makes pip build sdists under the line's
    build_constraints (pip passes PIP_CONSTRAINT on to the isolated build
    environments), and the constraints file, or (None, None).
    """
    if not base.build_constraints:
        return None, None
    path = pathlib.Path(folder) / 'build-constraints.txt'
    path.write_text('\n'.join(base.build_constraints) + '\n')
    return dict(os.environ, PIP_CONSTRAINT=str(path)), path


def tool(root, name, *requirements, command=None):
    """.venvs/_NAME: a venv of the tool's own python with requirements.

    Returns its COMMAND (default: NAME).
    """
    tool = pathlib.Path(root) / '.venvs' / ('_' + name)
    exe = tool / 'bin' / (command or name)
    if not exe.exists():
        shutil.rmtree(tool, ignore_errors=True)
        try:
            _create(sys.executable, tool, version=sys.version_info[:2])
            _run([str(tool / 'bin' / 'python'), '-m', 'pip', 'install', '-q',
                  '--disable-pip-version-check'] + list(requirements),
                 'installing %s' % ' '.join(requirements))
        except BaseException:
            shutil.rmtree(tool, ignore_errors=True)
            raise
    return exe


def _virtualenv(root):
    """A virtualenv that can still make Python 2.7 environments."""
    return tool(root, 'virtualenv', VIRTUALENV)


def uv(root):
    """uv, installed from PyPI with pip into .venvs/_uv."""
    return tool(root, 'uv', UV)


def _create(python, path, root=None, version=(3,)):
    """A venv of python at path (virtualenv for Python 2); its python."""
    if tuple(version) < (3,):
        _run([str(_virtualenv(root)), '-q', '-p', python, str(path)],
             'creating a Python 2.7 virtualenv with %s' % python)
    else:
        _run([python, '-m', 'venv', str(path)],
             'creating a venv with %s (is the venv module installed?)'
             % python)
    return path / 'bin' / 'python'


def installer(rt):
    """'uv' or 'pip': what makes and fills the venv for the runtime rt."""
    forced = os.environ.get('NOVA_FORK_INSTALLER', '')
    if forced and forced not in INSTALLERS:
        raise errors.UsageError(
            'NOVA_FORK_INSTALLER=%s: it takes %s; unset it to use uv where '
            'the interpreter allows' % (forced, ' or '.join(INSTALLERS)))
    if rt.in_root:
        why = 'inside the Debian %s root venvs are made with pip' % rt.suite
    elif tuple(rt.version) < UV_PYTHON:
        why = 'uv makes no venvs for Python %s (only %d.%d and newer)' % (
            '.'.join(map(str, rt.version)), *UV_PYTHON)
    else:
        return forced or 'uv'
    if forced == 'uv':
        raise errors.UsageError(
            'NOVA_FORK_INSTALLER=uv, but %s; unset it or set it to pip'
            % why)
    return 'pip'


def _fill_with_uv(base, rt, path):
    exe = str(uv(base.root))
    # uv never fetches an interpreter of its own: the runtime's it is.
    env = dict(os.environ, UV_PYTHON_DOWNLOADS='never')
    _run([exe, 'venv', '-q', '--python', rt.python, str(path)],
         'creating a venv with uv and %s' % rt.python, env=env)
    python = path / 'bin' / 'python'
    cmd = [exe, 'pip', 'install', '-q', '--no-deps', '-r', str(base.lock),
           '--python', str(python)]
    with tempfile.TemporaryDirectory() as tmp:
        _, constraints = _build_env(base, tmp)
        if constraints:
            cmd += ['--build-constraint', str(constraints)]
        _run(cmd, 'installing %s into %s with uv' % (base.lock.name, path),
             env=env)
    return python


def _create_in_root(rt, path):
    if rt.version < (3,):
        # virtualenv<20.22, installed for the root's python3 with the root
        env = dict(os.environ, PYTHONPATH=runtime.ROOT_VIRTUALENV)
        cmd = ['python3', '-m', 'virtualenv', '-q', '-p', rt.python,
               str(path)]
    else:
        env = None
        cmd = [rt.python, '-m', 'venv', str(path)]
    proc = rt.run(cmd, env=env, stdout=subprocess.PIPE,
                  stderr=subprocess.STDOUT, text=True)
    if proc.returncode:
        raise errors.ForkError('creating a %s venv in %s failed: %s'
                               % (rt.base.python, rt.root, _tail(proc)))
    return path / 'bin' / 'python'


def _fill_with_pip(base, rt, path):
    if rt.in_root:
        python = _create_in_root(rt, path)
    else:
        python = _create(rt.python, path, base.root, rt.version)
    # beside the venv, where a Debian root sees it too
    env, _ = _build_env(base, path)
    if base.build_constraints:
        # an old pip builds an sdist without pyproject.toml with the venv's
        # own setuptools
        proc = rt.run([str(python), '-m', 'pip', 'install', '-q',
                       '--disable-pip-version-check'] +
                      list(base.build_constraints),
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                      text=True)
        if proc.returncode:
            raise errors.ForkError('installing %s into %s failed: %s' % (
                ' '.join(base.build_constraints), path, _tail(proc)))
    proc = rt.run([str(python), '-m', 'pip', 'install', '-q',
                   '--disable-pip-version-check', '--no-deps',
                   '-r', str(base.lock)],
                  env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                  text=True)
    if proc.returncode:
        raise errors.ForkError('installing %s into %s failed: %s' % (
            base.lock.name, path, _tail(proc)))
    return python


def ensure(base):
    """Build the base's venv from its lock file, or reuse it; return python.

    The venv is made where the base's runtime says: with the host's
    interpreter (PATH or pyenv) in .venvs/SERIES, or inside a Debian root
    in .venvs/SERIES-SUITE.
    """
    if not base.lock.is_file():
        raise errors.UsageError(
            'series %s has no lock file at %s; generate it with '
            '"nova-fork lock %s --constraints FILE"' % (
                base.series, base.lock, base.series))
    step = progress.Step()
    rt = runtime.pick(base)
    want = '%s %s' % (hashlib.sha256(base.lock.read_bytes()).hexdigest(),
                      rt.where)
    path = rt.venv_dir
    python = path / 'bin' / 'python'
    stamp = path / STAMP
    if stamp.is_file() and stamp.read_text().strip() == want and \
            python.exists():
        step.done('venv: %s, reused' % progress.where(path, base.root),
                  once=True)
        return python
    how = installer(rt)
    shutil.rmtree(path, ignore_errors=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        rt.prepare()
        if how == 'uv':
            python = _fill_with_uv(base, rt, path)
        else:
            python = _fill_with_pip(base, rt, path)
        stamp.write_text(want + '\n')
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        raise
    step.done('venv: %s, made with %s from %s' % (
        progress.where(path, base.root), how,
        progress.where(base.lock, base.root)))
    return python


def _name(requirement):
    """The normalized project name of a requirement or constraint line.

    >>> _name('oslo.concurrency===4.5.0'), _name('Oslo_Concurrency>=5.0.1')
    ('oslo-concurrency', 'oslo-concurrency')
    >>> _name('# a comment'), _name('')
    (None, None)
    """
    match = re.match(r'([A-Za-z0-9][A-Za-z0-9._-]*)', requirement.strip())
    return re.sub(r'[-_.]+', '-', match.group(1)).lower() if match else None


def overridden(constraints, ours):
    """Upstream's constraints, without the projects that ours pin.

    A pin of lock_extra overrides upstream's pin of the same project (the
    two would conflict): yoga's line takes zed's oslo.concurrency.

    >>> overridden('oslo.concurrency===4.5.0\\nfasteners===0.17.3\\n',
    ...            ['oslo_concurrency==5.0.1'])
    'fasteners===0.17.3\\n'
    """
    names = {_name(pin) for pin in ours}
    return ''.join(line for line in constraints.splitlines(True)
                   if _name(line) not in names)


def lock(base, constraints):
    """Resolve the base's test requirements against upstream constraints.

    Installs nova's requirements and test requirements from the sdist, the
    placement release, and a setuptools with pkg_resources into a throw-away
    venv, checks that it is consistent, and writes its freeze as the lock.
    """
    if constraints is not None:
        constraints = pathlib.Path(constraints)
        if not constraints.is_file():
            raise errors.UsageError('no constraints file at %s' % constraints)
    sdist = fetch.fetch(base.root, base.nova, base.sha256)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        build.unpack(sdist, tmp / 'src')
        rt = runtime.pick(base, host_only=True)
        python = _create(rt.python, tmp / 'venv', base.root, rt.version)
        # Pins of our own go in as constraints: old pips refuse a
        # requirement that nova's requirement files name too.
        extra = tmp / 'extra-constraints.txt'
        extra.write_text('\n'.join((SETUPTOOLS,) + base.lock_extra) + '\n')
        wanted = ['-r', str(tmp / 'src' / 'requirements.txt'),
                  '-r', str(tmp / 'src' / 'test-requirements.txt')]
        if base.placement:
            wanted.append('openstack-placement==%s' % base.placement)
        pins = ['-c', str(extra)]
        if constraints:
            upstream = tmp / 'upper-constraints.txt'
            upstream.write_text(overridden(constraints.read_text(),
                                           base.lock_extra))
            pins += ['-c', str(upstream)]
        env, _ = _build_env(base, tmp)
        if base.build_constraints:
            # an old pip builds an sdist without pyproject.toml with the
            # venv's own setuptools
            _run([str(python), '-m', 'pip', 'install', '-q',
                  '--disable-pip-version-check'] +
                 list(base.build_constraints),
                 'installing %s' % ' '.join(base.build_constraints))
        _run([str(python), '-m', 'pip', 'install', '-q',
              '--disable-pip-version-check'] + pins + wanted,
             'resolving the test requirements of nova %s' % base.nova,
             env=env)
        _run([str(python), '-m', 'pip', 'check'],
             'checking the resolved venv')
        frozen = subprocess.run(
            [str(python), '-m', 'pip', 'freeze', '--all'],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            check=True).stdout
    header = (
        '# Test dependencies of nova %s (series %s), generated by\n'
        '# "nova-fork lock %s" from nova\'s requirements and test\n'
        '# requirements%s,\n# resolved against %s\n'
        '# and: %s%s.  Do not edit.\n'
        % (base.nova, base.series, base.series,
           ' and openstack-placement %s' % base.placement
           if base.placement else '',
           "upstream's upper-constraints" if constraints else
           'the newest releases on PyPI on %s' % time.strftime('%Y-%m-%d'),
           ', '.join((SETUPTOOLS,) + base.lock_extra),
           ' (ours win)' if constraints and base.lock_extra else ''))
    # Only the pins: not the find-links or index options a machine's pip
    # configuration may add to a freeze.
    lines = sorted((line for line in frozen.splitlines()
                    if '==' in line and line[0].isalnum()), key=str.lower)
    base.lock.parent.mkdir(parents=True, exist_ok=True)
    tmp_lock = base.lock.with_suffix('.tmp')
    tmp_lock.write_text(header + '\n'.join(lines) + '\n')
    tmp_lock.replace(base.lock)
    return base.lock
