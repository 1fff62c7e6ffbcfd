"""Debian roots made with debootstrap: a suite's Python on any host.

A root per suite is provisioned under .cache/chroot/SUITE with debootstrap
(as root; cached and reused), with the packages of the interpreter wanted
(pythonX.Y and its headers, and what building sdists and making venvs
needs); an interpreter wanted later in the same root is added with
apt-get.  The host's CA bundle and resolver configuration are copied in so
that pip inside reaches PyPI.  The project folder is bind-mounted at the
same path, so paths are the same inside and out.  Every mount is undone
when the command ends, also when a test fails or the run is interrupted.

This module is the mechanics only: which base runs where is runtime's
business.
"""

import contextlib
import os
import pathlib
import shutil
import signal
import subprocess

from nova_fork import errors
from nova_fork import facts

MIRROR = 'http://deb.debian.org/debian'
# The interpreters each suite packages; the last one is its python3
# (a fact config shares: nova_fork/facts.py).
SUITES = facts.SUITES
# Besides the interpreter and its headers: python3 (it runs virtualenv for
# Python 2.7), a compiler and libc headers for the sdists that build C
# code, CA certificates and git.
COMMON = ('python3', 'gcc', 'libc6-dev', 'ca-certificates', 'git')
# The last virtualenv release that creates Python 2.7 environments.
VIRTUALENV = 'virtualenv<20.22'
VIRTUALENV_DIR = 'opt/nova-fork-virtualenv'
STAMP = '.nova-fork-complete'


def path(project, suite):
    return pathlib.Path(project) / '.cache' / 'chroot' / suite


def has(suite, python):
    """True when the suite packages the interpreter PYTHON (python3.9).

    >>> has('bullseye', 'python2.7'), has('bookworm', 'python2.7')
    (True, False)
    >>> has('trixie', 'python3')
    True
    """
    return python in SUITES[suite] or python == 'python3'


def python3_version(suite):
    """'3.9' for bullseye: the version of the suite's python3."""
    return SUITES[suite][-1][len('python'):]


def packages(python):
    """The Debian packages a root needs to run PYTHON's tests in.

    >>> packages('python2.7')
    ... # doctest: +NORMALIZE_WHITESPACE
    ('python2.7', 'python2.7-dev', 'python3', 'gcc', 'libc6-dev',
     'ca-certificates', 'git')
    >>> packages('python3.11')[:3]
    ('python3.11', 'python3.11-dev', 'python3.11-venv')
    """
    own = (python, python + '-dev')
    if not python.startswith('python2'):
        # Debian keeps ensurepip, which "python3.X -m venv" uses, apart.
        own += (python + '-venv',)
    return own + tuple(p for p in COMMON if p not in own)


def installed(target):
    """The packages a complete root was provisioned with, or None."""
    stamp = pathlib.Path(target) / STAMP
    if not stamp.is_file():
        return None
    return set(stamp.read_text().split())


def ready(target, python):
    """True when the root is complete and has PYTHON's packages."""
    have = installed(target)
    return have is not None and have.issuperset(packages(python)) and (
        not python.startswith('python2') or
        (pathlib.Path(target) / VIRTUALENV_DIR).is_dir())


def cannot_use(target):
    """Why this host cannot make or use the root, or None if it can.

    Chroot and mount need root; making the root (but not adding packages
    to a complete one) needs debootstrap.
    """
    if os.geteuid() != 0:
        return 'it needs root: run as root'
    if installed(target) is None and not shutil.which('debootstrap'):
        return 'making it needs debootstrap: apt-get install debootstrap'
    return None


def _run(cmd, what, **kwargs):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, **kwargs)
    if proc.returncode:
        lines = [s for s in proc.stdout.splitlines() if s.strip()]
        raise errors.ForkError('%s failed: %s' % (
            what, lines[-1] if lines else 'exit %d' % proc.returncode))
    return proc.stdout


def provision(project, suite, python):
    """Make (or reuse) the SUITE root with PYTHON's packages; its path."""
    if not has(suite, python):
        raise errors.UsageError(
            'Debian %s has no %s (it has %s)' % (
                suite, python, ', '.join(SUITES[suite])))
    target = path(project, suite)
    if ready(target, python):
        return target
    problem = cannot_use(target)
    if problem:
        raise errors.UsageError('the Debian %s root for %s: %s' % (
            suite, python, problem))
    if installed(target) is not None:
        _add(project, target, suite, python)
        return target
    partial = target.with_name(target.name + '.partial')
    unmount_all(partial)
    shutil.rmtree(partial, ignore_errors=True)
    partial.parent.mkdir(parents=True, exist_ok=True)
    try:
        # debootstrap's own resolver misses some dependencies (bookworm's
        # python3.11-venv needs python3.11-distutils): it installs the
        # common packages, apt-get the interpreter's (_add)
        _run(['debootstrap', '--variant=minbase',
              '--include=%s' % ','.join(COMMON), suite,
              str(partial), MIRROR], 'debootstrap %s' % suite)
        (partial / STAMP).write_text('%s\n' % ' '.join(COMMON))
        partial.rename(target)
    finally:
        unmount_all(partial)
        shutil.rmtree(partial, ignore_errors=True)
    _add(project, target, suite, python)
    return target


def _add(project, target, suite, python):
    """Add PYTHON's packages to a complete root made for another one."""
    have = installed(target)
    missing = [p for p in packages(python) if p not in have]
    if missing:
        env = {'PATH': '/usr/sbin:/usr/bin:/sbin:/bin',
               'DEBIAN_FRONTEND': 'noninteractive'}
        with mounted(target, project):
            install = ['install', '-y', '-q', '--no-install-recommends']
            for args in (['update', '-q'], install + missing):
                _run(command(target, ['apt-get'] + args, '/'),
                     'apt-get %s in the %s root' % (args[0], suite), env=env)
    if python.startswith('python2') and \
            not (target / VIRTUALENV_DIR).is_dir():
        _install_virtualenv(target, suite)
    (target / STAMP).write_text(
        '%s\n' % ' '.join(sorted(have) + missing))


def _install_virtualenv(chroot, suite):
    """virtualenv<20.22 for the root's python3: it makes 2.7 venvs."""
    _run(['python3', '-m', 'pip', 'install', '-q', '--no-deps',
          '--disable-pip-version-check', '--only-binary=:all:',
          '--python-version', python3_version(suite), '--target',
          str(chroot / VIRTUALENV_DIR), VIRTUALENV, 'distlib<1',
          'filelock<4', 'platformdirs<4'],
         'installing virtualenv into the %s root' % suite)


def _copy_host_config(chroot):
    for name in ('etc/resolv.conf', 'etc/ssl/certs/ca-certificates.crt'):
        source = pathlib.Path('/') / name
        if source.is_file():
            (chroot / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, chroot / name)


def mounts_under(folder):
    folder = str(pathlib.Path(folder).resolve())
    found = []
    with open('/proc/mounts') as f:
        for line in f:
            point = line.split()[1].replace('\\040', ' ')
            if point == folder or point.startswith(folder + '/'):
                found.append(point)
    return found


def unmount_all(folder):
    """Undo every mount under folder, deepest first."""
    for point in sorted(mounts_under(folder), key=len, reverse=True):
        subprocess.run(['umount', point], stderr=subprocess.DEVNULL)
        if point in mounts_under(folder):
            subprocess.run(['umount', '-l', point],
                           stderr=subprocess.DEVNULL)


def _terminate(signum, frame):
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def mounted(chroot, project):
    """Mount /proc, /dev and the project into the root; undo on exit."""
    _copy_host_config(chroot)
    unmount_all(chroot)
    old = signal.signal(signal.SIGTERM, _terminate)
    try:
        inside = chroot / str(project).lstrip('/')
        inside.mkdir(parents=True, exist_ok=True)
        # Plain binds (no submounts), made private, so that undoing them
        # can never reach the host's own mounts.
        for args in (['-t', 'proc', 'proc', str(chroot / 'proc')],
                     ['--bind', '/dev', str(chroot / 'dev')],
                     ['--bind', str(project), str(inside)]):
            _run(['mount'] + args, 'mount %s' % args[-1])
            _run(['mount', '--make-private', args[-1]],
                 'mount --make-private %s' % args[-1])
        yield
    finally:
        unmount_all(chroot)
        signal.signal(signal.SIGTERM, old)


def run(cmd, input=None, **kwargs):
    """subprocess.run in a session of its own, killed whole if we stop.

    So that no test process is left running inside the root when its
    mounts are undone.
    """
    proc = subprocess.Popen(cmd, start_new_session=True,
                            stdin=subprocess.PIPE if input else None,
                            **kwargs)
    try:
        out, err = proc.communicate(input)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def command(chroot, cmd, cwd):
    """cmd (absolute paths) as run inside the root, in cwd."""
    script = 'cd "$1" && shift && exec "$@"'
    return ['chroot', str(chroot), '/bin/sh', '-c', script, 'sh',
            str(cwd)] + [str(c) for c in cmd]
