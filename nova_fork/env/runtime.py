"""Where a base's commands run: the host's interpreter, or a Debian root.

A base's ``runtime`` in bases.ini lists, in order, the providers of its
interpreter (``python``) to try; the first that works is used:

``path``
    the interpreter on the host's PATH (a pyenv shim that has no such
    version selected does not count);
``pyenv``
    the newest matching version under $PYENV_ROOT (or ~/.pyenv)/versions;
``uv``
    a uv-managed interpreter (``uv python find``), installed with ``uv
    python install`` where there is none and uv may download (uv on PATH,
    or the one the tool installs for venvs, .venvs/_uv);
``debian:SUITE``
    a Debian root of that suite (chroot.SUITES says which interpreters
    each has), made with debootstrap on first use.

NOVA_FORK_CHROOT=1 forces the base's Debian root, when it lists one.  The
venvs of a base live in .venvs/SERIES on the host and .venvs/SERIES-SUITE
for a Debian root (the project is bind-mounted at the same path inside).
"""

import dataclasses
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

from nova_fork.env import chroot
from nova_fork import errors

PATH = 'path'
PYENV = 'pyenv'
UV = 'uv'
DEBIAN = 'debian:'
# Where the tool installs uv for its venvs (venv.uv), relative to the
# project: the uv provider's second choice after PATH.
UV_OF_THE_TOOL = pathlib.PurePath('.venvs', '_uv', 'bin', 'uv')
# The virtualenv that makes Python 2.7 environments, and where a Debian
# root has it (for its python3, on PYTHONPATH).
VIRTUALENV = chroot.VIRTUALENV
ROOT_VIRTUALENV = '/' + chroot.VIRTUALENV_DIR


def chroot_wanted():
    """True when the user asks for the Debian root even with a host one."""
    return os.environ.get('NOVA_FORK_CHROOT') == '1'


def version_of(python):
    """The version part of an interpreter name.

    >>> version_of('python3.11'), version_of('python2.7'), version_of('x')
    ('3.11', '2.7', '')
    """
    return python[len('python'):] if python.startswith('python') else ''


def _as_tuple(version):
    return tuple(int(n) for n in re.findall(r'\d+', version))


@dataclasses.dataclass(frozen=True)
class Runtime:
    """The provider picked for a base, and how to run commands with it."""

    base: object = dataclasses.field(repr=False)
    provider: str
    # the interpreter's path (inside the root for a Debian one)
    python: str
    # (major, minor)
    version: tuple

    @property
    def suite(self):
        return self.provider[len(DEBIAN):] if self.in_root else None

    @property
    def in_root(self):
        return self.provider.startswith(DEBIAN)

    @property
    def root(self):
        """The Debian root's folder, or None on the host."""
        return chroot.path(self.base.root, self.suite) if self.in_root \
            else None

    @property
    def venv_dir(self):
        """.venvs/SERIES, or .venvs/SERIES-SUITE for a Debian root."""
        name = self.base.series
        if self.in_root:
            name += '-' + self.suite
        return pathlib.Path(self.base.root) / '.venvs' / name

    @property
    def where(self):
        """'host' or 'chroot', as the venv's stamp records it."""
        return 'chroot' if self.in_root else 'host'

    def describe(self):
        """For messages: python3.11 (pyenv), python2.7 (Debian bullseye)."""
        how = 'Debian %s' % self.suite if self.in_root else \
            'PATH' if self.provider == PATH else self.provider
        return '%s (%s)' % (self.base.python, how)

    def prepare(self):
        """Provision the Debian root with the interpreter; no-op on host."""
        if self.in_root:
            chroot.provision(self.base.root, self.suite, self.base.python)

    def run(self, cmd, cwd=None, env=None, **kwargs):
        """subprocess.run of cmd for the base, on the host or in its root.

        In a root, cmd's paths are the host's (the project is mounted at
        the same path) and cwd defaults to the project.
        """
        if not self.in_root:
            return subprocess.run(cmd, cwd=cwd, env=env, **kwargs)
        self.prepare()
        env = dict(os.environ if env is None else env)
        env['PATH'] = env.get('PATH', '') + ':/usr/sbin:/usr/bin:/sbin:/bin'
        env['PIP_CERT'] = '/etc/ssl/certs/ca-certificates.crt'
        with chroot.mounted(self.root, self.base.root):
            return chroot.run(chroot.command(
                self.root, cmd, cwd or self.base.root), env=env, **kwargs)


_PROBE = ('import sys; print("%d.%d %s" % (sys.version_info[0], '
          'sys.version_info[1], sys.executable))')


def probe(python):
    """((major, minor), executable) of an interpreter, or None if it fails.

    The executable is the interpreter itself, not a shim in front of it.
    """
    try:
        proc = subprocess.run([python, '-c', _PROBE], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    except OSError:
        return None
    words = proc.stdout.split(None, 1)
    if proc.returncode or len(words) != 2:
        return None
    return _as_tuple(words[0]), words[1].strip() or python


def pyenv_versions():
    return pathlib.Path(os.environ.get('PYENV_ROOT') or
                        pathlib.Path.home() / '.pyenv') / 'versions'


def _on_path(base):
    found = shutil.which(base.python)
    if not found:
        return None, 'none'
    probed = probe(found)
    if not probed:
        return None, '%s does not run' % found
    return Runtime(base, PATH, probed[1], probed[0]), None


def _in_pyenv(base):
    """The newest pyenv version of the interpreter: 3.9.18 before 3.9.2."""
    version = version_of(base.python)
    versions = pyenv_versions()
    name = re.compile(r'%s(\.\d+)*$' % re.escape(version))
    found = sorted((d for d in versions.glob(version + '*')
                    if name.match(d.name)),
                   key=lambda d: _as_tuple(d.name), reverse=True)
    for folder in found:
        probed = probe(str(folder / 'bin' / base.python))
        if probed:
            return Runtime(base, PYENV, probed[1], probed[0]), None
    if found:
        return None, '%s does not run' % (found[0] / 'bin' / base.python)
    return None, 'no %s under %s' % (version or base.python, _short(versions))


def _short(folder):
    """~/x for a folder under the home folder, for messages."""
    home = str(pathlib.Path.home())
    folder = str(folder)
    if home != '/' and folder.startswith(home + '/'):
        return '~' + folder[len(home):]
    return folder


def uv_executable(root):
    """uv on PATH, or the tool's own (.venvs/_uv); None if neither."""
    found = shutil.which('uv')
    if found:
        return found
    local = pathlib.Path(root) / UV_OF_THE_TOOL
    return str(local) if local.is_file() else None


def _uv(exe, *args):
    """Run uv ARGS, away from any project or active venv of the caller.

    ``uv python find`` looks in an active venv and in ./.venv first; the
    provider wants uv's own installations only.
    """
    env = dict(os.environ)
    env.pop('VIRTUAL_ENV', None)
    try:
        return subprocess.run([exe] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env,
                              cwd=tempfile.gettempdir())
    except OSError as exc:
        return subprocess.CompletedProcess([exe], 127, '', str(exc))


def _uv_find(exe, version):
    """The uv-managed interpreter of version, or None."""
    proc = _uv(exe, 'python', 'find', '--no-project',
               '--python-preference', 'only-managed', version)
    found = proc.stdout.strip().splitlines()
    return found[-1] if proc.returncode == 0 and found else None


def _last_line(text):
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else 'no message'


def _with_uv(base):
    """A uv-managed interpreter; uv installs it where it has none."""
    version = version_of(base.python)
    if not version or _as_tuple(version) < (3,):
        return None, 'uv has no Python %s' % (version or base.python)
    exe = uv_executable(base.root)
    if not exe:
        return None, 'no uv on PATH or in %s' % UV_OF_THE_TOOL.parent.parent
    found = _uv_find(exe, version)
    if not found:
        # uv says itself where downloads are not allowed (UV_OFFLINE,
        # UV_PYTHON_DOWNLOADS=never) or the network is out of reach
        proc = _uv(exe, 'python', 'install', version)
        if proc.returncode:
            return None, 'uv python install %s failed: %s' % (
                version, _last_line(proc.stderr + proc.stdout))
        found = _uv_find(exe, version)
        if not found:
            return None, 'uv python install %s installed none that uv ' \
                'python find finds' % version
    probed = probe(found)
    if not probed:
        return None, '%s does not run' % found
    return Runtime(base, UV, probed[1], probed[0]), None


def _in_debian(base, suite):
    if not chroot.has(suite, base.python):
        return None, '%s has only %s' % (suite,
                                         ', '.join(chroot.SUITES[suite]))
    problem = chroot.cannot_use(chroot.path(base.root, suite))
    if problem:
        return None, problem
    version = version_of(base.python)
    if version.count('.') != 1:
        # python3: the suite's own
        version = chroot.python3_version(suite)
    return Runtime(base, DEBIAN + suite, '/usr/bin/' + base.python,
                   _as_tuple(version)), None


def _try(base, provider):
    if provider == PATH:
        return _on_path(base)
    if provider == PYENV:
        return _in_pyenv(base)
    if provider == UV:
        return _with_uv(base)
    return _in_debian(base, provider[len(DEBIAN):])


def _clause(provider, why):
    if provider == PATH:
        return 'on PATH (%s)' % why
    if provider == PYENV:
        return 'in pyenv (%s)' % why
    if provider == UV:
        return 'with uv (%s)' % why
    return 'in a Debian %s root (%s)' % (provider[len(DEBIAN):], why)


def _missing(base, tried, forced, host_only):
    clauses = [_clause(p, why) for p, why in tried]
    if forced:
        clauses.append('NOVA_FORK_CHROOT=1 leaves out the host')
    elif host_only:
        clauses.append('this command runs on the host only')
    elif not any(p.startswith(DEBIAN) for p in base.runtime):
        clauses.append('the base lists no Debian root')
    if len(clauses) > 1:
        clauses[-1] = 'and ' + clauses[-1]
    version = version_of(base.python)
    python3 = bool(version) and _as_tuple(version) >= (3,)
    hints = []
    if forced:
        hints.append('unset NOVA_FORK_CHROOT to use the host')
    else:
        ways = ['pyenv install %s' % version] if version else []
        if python3 and UV in base.runtime:
            ways.append('uv python install %s' % version)
        ways.append('apt-get install %s' % base.python)
        hints.append('install it (%s)' % ', '.join(ways))
        more = [UV] if python3 and UV not in base.runtime else []
        if not host_only:
            listed = [p for p in base.runtime if p.startswith(DEBIAN)]
            more += [DEBIAN + s for s in chroot.SUITES
                     if chroot.has(s, base.python) and
                     DEBIAN + s not in listed][:1]
        if more:
            hints.append('add %s to its runtime in bases.ini' % (
                ' or '.join(more)))
    return '%s, which series %s runs its tests on, was not found: %s; %s' % (
        base.python, base.series, ', '.join(clauses), ' or '.join(hints))


def pick(base, host_only=False):
    """The first of the base's providers that works, as a Runtime.

    host_only leaves the Debian roots out (nova-fork lock).  Raises
    UsageError, naming what was tried and how to provide the interpreter,
    when none works.
    """
    providers = list(base.runtime)
    forced = not host_only and chroot_wanted() and \
        any(p.startswith(DEBIAN) for p in providers)
    if forced:
        providers = [p for p in providers if p.startswith(DEBIAN)]
    elif host_only:
        providers = [p for p in providers if not p.startswith(DEBIAN)]
    tried = []
    for provider in providers:
        found, why = _try(base, provider)
        if found:
            return found
        tried.append((provider, why))
    raise errors.UsageError(_missing(base, tried, forced, host_only))


def run(base, cmd, cwd=None, env=None, **kwargs):
    """Run cmd for the base, where its runtime says; see Runtime.run."""
    return pick(base).run(cmd, cwd=cwd, env=env, **kwargs)
