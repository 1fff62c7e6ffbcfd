"""A Debian bullseye root for series whose Python the host lacks.

Rocky's tests need Python 2.7.  Where the host has none, nova-fork
provisions a bullseye root with debootstrap (cached under
.cache/chroot/bullseye and reused), copies the host's CA bundle and
resolver configuration into it so that pip inside reaches PyPI, and runs
the venv and stestr inside it.  The project folder is bind-mounted at the
same path, so paths are the same inside and out.  Every mount is undone
when the command ends, also when a test fails or the run is interrupted.
"""

import contextlib
import os
import pathlib
import shutil
import signal
import subprocess

from nova_fork import errors

SUITE = 'bullseye'
MIRROR = 'http://deb.debian.org/debian'
# python2.7 for the tests, python3 to run virtualenv, a compiler and the
# headers for the sdists among rocky's dependencies that build C code.
PACKAGES = ('python2.7', 'python2.7-dev', 'python3', 'gcc', 'libc6-dev',
            'ca-certificates', 'git')
VIRTUALENV_DIR = 'opt/nova-fork-virtualenv'
STAMP = '.nova-fork-complete'


def wanted():
    """True when the user asks for the chroot even with a host python."""
    return os.environ.get('NOVA_FORK_CHROOT') == '1'


def path(root):
    return pathlib.Path(root) / '.cache' / 'chroot' / SUITE


def _run(cmd, what, **kwargs):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, **kwargs)
    if proc.returncode:
        lines = [s for s in proc.stdout.splitlines() if s.strip()]
        raise errors.ForkError('%s failed: %s' % (
            what, lines[-1] if lines else 'exit %d' % proc.returncode))
    return proc.stdout


def provision(root):
    """Make (or reuse) the bullseye root; return its path."""
    target = path(root)
    if (target / STAMP).is_file():
        return target
    if os.geteuid() != 0:
        raise errors.UsageError(
            'this host has no python2.7 and making a bullseye root for it '
            'needs root: run as root, or install python2.7')
    if not shutil.which('debootstrap'):
        raise errors.UsageError(
            'this host has no python2.7 and no debootstrap to make a '
            'bullseye root with one: apt-get install debootstrap (or '
            'install python2.7)')
    partial = target.with_name(target.name + '.partial')
    unmount_all(partial)
    shutil.rmtree(partial, ignore_errors=True)
    partial.parent.mkdir(parents=True, exist_ok=True)
    try:
        _run(['debootstrap', '--variant=minbase',
              '--include=%s' % ','.join(PACKAGES), SUITE, str(partial),
              MIRROR], 'debootstrap %s' % SUITE)
        _install_virtualenv(partial)
        (partial / STAMP).write_text('%s\n' % ' '.join(PACKAGES))
        partial.rename(target)
    finally:
        unmount_all(partial)
        shutil.rmtree(partial, ignore_errors=True)
    return target


def _install_virtualenv(chroot):
    """virtualenv<20.22 for the root's python3: it makes 2.7 venvs."""
    from nova_fork import venv
    _run(['python3', '-m', 'pip', 'install', '-q', '--no-deps',
          '--disable-pip-version-check', '--only-binary=:all:',
          '--python-version', '3.9', '--target',
          str(chroot / VIRTUALENV_DIR), venv.VIRTUALENV, 'distlib<1',
          'filelock<4', 'platformdirs<4'],
         'installing virtualenv into the %s root' % SUITE)


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
