"""The test virtualenv of a base, installed from the project's lock file."""

import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

from nova_fork import build
from nova_fork import chroot
from nova_fork import errors
from nova_fork import fetch

STAMP = 'nova-fork-lock.sha256'

# Nova's tests of these releases import pkg_resources, which setuptools
# dropped in release 81: keep the venv on a setuptools that still has it.
SETUPTOOLS = 'setuptools<70'

# The last virtualenv release that creates Python 2.7 environments.
VIRTUALENV = 'virtualenv<20.22'


def venv_dir(root, series, in_chroot=False):
    """.venvs/SERIES, or .venvs/SERIES-bullseye for one made in the root."""
    name = '%s-%s' % (series, chroot.SUITE) if in_chroot else series
    return pathlib.Path(root) / '.venvs' / name


def _works(python):
    try:
        return subprocess.run([python, '-c', 'import sys'],
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0
    except OSError:
        return False


def find_interpreter(name):
    """The host's NAME (e.g. python2.7), from PATH or pyenv, or None.

    A pyenv shim on PATH that has no such version selected does not count.
    """
    candidates = [shutil.which(name)]
    pyenv = pathlib.Path(os.environ.get('PYENV_ROOT',
                                        pathlib.Path.home() / '.pyenv'))
    version = name.replace('python', '')
    candidates += sorted(
        str(p) for p in pyenv.glob('versions/%s*/bin/%s' % (version, name)))
    for candidate in candidates:
        if candidate and _works(candidate):
            return candidate
    return None


def interpreter(base):
    python = find_interpreter(base.python)
    if not python:
        raise errors.UsageError(
            '%s, which series %s runs its tests on, is not installed; '
            'install it (e.g. apt-get install %s) and run again' % (
                base.python, base.series, base.python))
    return python


def _run(cmd, what):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    if proc.returncode:
        lines = [s for s in proc.stdout.splitlines() if s.strip()]
        tail = lines[-1] if lines else 'exit %d' % proc.returncode
        if 'NewConnectionError' in proc.stdout or \
                'Temporary failure in name resolution' in proc.stdout:
            tail = 'PyPI is not reachable (no network?)'
        raise errors.ForkError('%s failed: %s' % (what, tail))
    return proc.stdout


def _virtualenv(root):
    """A virtualenv that can still make Python 2.7 environments."""
    tool = pathlib.Path(root) / '.venvs' / '_virtualenv'
    exe = tool / 'bin' / 'virtualenv'
    if not exe.exists():
        shutil.rmtree(tool, ignore_errors=True)
        try:
            _create(sys.executable, tool)
            _run([str(tool / 'bin' / 'python'), '-m', 'pip', 'install', '-q',
                  '--disable-pip-version-check', VIRTUALENV],
                 'installing %s' % VIRTUALENV)
        except BaseException:
            shutil.rmtree(tool, ignore_errors=True)
            raise
    return exe


def _create(python, path, root=None):
    if python.endswith('python2.7'):
        _run([str(_virtualenv(root)), '-q', '-p', python, str(path)],
             'creating a Python 2.7 virtualenv with %s' % python)
    else:
        _run([python, '-m', 'venv', str(path)],
             'creating a venv with %s (is the venv module installed?)'
             % python)
    return path / 'bin' / 'python'


def chroot_of(base):
    """The bullseye root the base's tests run in, or None for the host."""
    if chroot.wanted() or not find_interpreter(base.python):
        return chroot.path(base.root)
    return None


def run(base, cmd, cwd=None, env=None, **kwargs):
    """Run cmd for the base: on the host, or inside its bullseye root."""
    root = chroot_of(base)
    if root is None:
        return subprocess.run(cmd, cwd=cwd, env=env, **kwargs)
    env = dict(env or os.environ)
    env['PATH'] = env.get('PATH', '') + ':/usr/sbin:/usr/bin:/sbin:/bin'
    env['PIP_CERT'] = '/etc/ssl/certs/ca-certificates.crt'
    with chroot.mounted(root, base.root):
        return chroot.run(chroot.command(root, cmd, cwd or base.root),
                          env=env, **kwargs)


def _create_in_chroot(base, path):
    root = chroot.provision(base.root)
    env = dict(os.environ, PYTHONPATH='/' + chroot.VIRTUALENV_DIR)
    proc = run(base, ['python3', '-m', 'virtualenv', '-q', '-p',
                      base.python, str(path)], env=env,
               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode:
        raise errors.ForkError('creating a %s virtualenv in %s failed: %s'
                               % (base.python, root, proc.stdout.strip()))
    return path / 'bin' / 'python'


def ensure(base):
    """Build the base's venv from its lock file, or reuse it; return python.

    Where the host has no interpreter for the base (or NOVA_FORK_CHROOT=1),
    the venv is made and used inside a Debian bullseye root.
    """
    if not base.lock.is_file():
        raise errors.UsageError(
            'series %s has no lock file at %s; generate it with '
            '"nova-fork lock %s --constraints FILE"' % (
                base.series, base.lock, base.series))
    in_chroot = chroot_of(base) is not None
    want = '%s %s' % (hashlib.sha256(base.lock.read_bytes()).hexdigest(),
                      'chroot' if in_chroot else 'host')
    path = venv_dir(base.root, base.series, in_chroot)
    python = path / 'bin' / 'python'
    stamp = path / STAMP
    if stamp.is_file() and stamp.read_text().strip() == want and \
            python.exists():
        return python
    shutil.rmtree(path, ignore_errors=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        if in_chroot:
            python = _create_in_chroot(base, path)
        else:
            python = _create(interpreter(base), path, base.root)
        proc = run(base, [str(python), '-m', 'pip', 'install', '-q',
                          '--disable-pip-version-check', '--no-deps',
                          '-r', str(base.lock)],
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                   text=True)
        if proc.returncode:
            lines = [s for s in proc.stdout.splitlines() if s.strip()]
            raise errors.ForkError('installing %s into %s failed: %s' % (
                base.lock.name, path, lines[-1] if lines else proc.returncode))
        stamp.write_text(want + '\n')
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        raise
    return python


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
        python = _create(interpreter(base), tmp / 'venv', base.root)
        # Pins of our own go in as constraints: old pips refuse a
        # requirement that nova's requirement files name too.
        extra = tmp / 'extra-constraints.txt'
        extra.write_text('\n'.join((SETUPTOOLS,) + base.lock_extra) + '\n')
        wanted = ['-r', str(tmp / 'src' / 'requirements.txt'),
                  '-r', str(tmp / 'src' / 'test-requirements.txt')]
        if base.placement:
            wanted.append('openstack-placement==%s' % base.placement)
        pins = ['-c', str(constraints)] if constraints else []
        pins += ['-c', str(extra)]
        _run([str(python), '-m', 'pip', 'install', '-q',
              '--disable-pip-version-check'] + pins + wanted,
             'resolving the test requirements of nova %s' % base.nova)
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
        '# and: %s.  Do not edit.\n'
        % (base.nova, base.series, base.series,
           ' and openstack-placement %s' % base.placement
           if base.placement else '',
           "upstream's upper-constraints" if constraints else
           'the newest releases on PyPI on %s' % time.strftime('%Y-%m-%d'),
           ', '.join((SETUPTOOLS,) + base.lock_extra)))
    # Only the pins: not the find-links or index options a machine's pip
    # configuration may add to a freeze.
    lines = sorted((line for line in frozen.splitlines()
                    if '==' in line and line[0].isalnum()), key=str.lower)
    base.lock.parent.mkdir(parents=True, exist_ok=True)
    tmp_lock = base.lock.with_suffix('.tmp')
    tmp_lock.write_text(header + '\n'.join(lines) + '\n')
    tmp_lock.replace(base.lock)
    return base.lock
