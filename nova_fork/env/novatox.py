"""Run a fork tree's own tox.ini, the way a Nova developer runs it.

``nova-fork tox LINE -- ARGS`` runs ``tox ARGS`` in build/LINE with a
pinned tox (in .venvs/_tox, like uv in .venvs/_uv) and three settings,
all of them the tools' own:

``TOX_CONSTRAINTS_FILE``
    the line's lock (locks/LINE.txt) as the constraints nova's tox.ini
    installs with, instead of upstream's URL;
``TOX_OVERRIDE=testenv.set_env+=PIP_CONSTRAINT=LOCK``
    the lock also as pip's own constraints in every test environment:
    tox's ``constraints`` setting, which nova's tox.ini uses from 2025.2
    on, leaves the package's own dependencies unconstrained;
``testenv.set_env+=VIRTUALENV_SETUPTOOLS=V;testenv.download=true``
    virtualenv seeds every test venv with the setuptools the lock pins:
    current virtualenv seeds a setuptools without pkg_resources (82 and
    later; none at all from Python 3.12), which nova's namespace packages
    and some of its test dependencies import;
``PATH`` and ``testenv.base_python=pythonX.Y`` (in TOX_OVERRIDE)
    only for a line whose Python is not the one tox runs on (2023.1:
    python3.10, from pyenv): its envs run on the line's Python.

A tree whose tox.ini tox 4 does not read as written (toxini.tox3_reasons:
``passenv`` names separated by spaces, ``whitelist_externals``; rocky to
yoga) gets tox 3 (TOX3, in .venvs/_tox3), which knows no TOX_OVERRIDE:
the lock as the variable its tox.ini reads (``UPPER_CONSTRAINTS_FILE``
up to train, ``TOX_CONSTRAINTS_FILE`` from ussuri), and in tox's own
environment, which tox 3 hands to every install command and to
virtualenv: ``PIP_CONSTRAINT`` (the extras that its usedevelop install
adds are not in its deps), ``VIRTUALENV_SETUPTOOLS`` and
``VIRTUALENV_DOWNLOAD`` (the lock's setuptools: suds-jurko, up to xena,
builds only with a setuptools older than 58), and the line's Python as
``TOX_DISCOVER`` (tox 3 would take its own interpreter for the envs whose
basepython is ``python3``, such as functional) and its folder first in
``PATH``.

It prints the equivalent shell command first, so that it can be typed by
hand.
"""

import dataclasses
import hashlib
import os
import pathlib
import re
import shlex
import subprocess
import sys

from nova_fork.env import runtime
from nova_fork.env import toxini
from nova_fork.env import venv
from nova_fork import errors
from nova_fork import progress
from nova_fork.tree import build

# The tox that drives the trees' tox.ini files, and the virtualenv it
# makes their venvs with: pinned, as tested on 2026-12-04.
TOX = ('tox==4.67.17', 'virtualenv==21.15.14')
# The trees whose tox.ini is of tox 3's era (toxini.tox3_reasons: rocky to
# yoga): tox 3, with the last virtualenv that makes Python 2.7
# environments (20.21).
TOX3 = ('tox==3.28.0', 'virtualenv==20.21.1')

NOVA_LOCALE = 'en_US.utf-8'

_PIN = re.compile(r'^([A-Za-z0-9_.-]+)==([^\s;#]+)')


def pinned(lock_text, name):
    """The version a lock (pip freeze format) pins name to, or None.

    >>> pinned('# x\\nSetuptools==65.5.0\\nsix==1.16.0\\n', 'setuptools')
    '65.5.0'
    >>> pinned('six==1.16.0\\n', 'setuptools') is None
    True
    """
    want = re.sub(r'[-_.]+', '-', name).lower()
    for line in lock_text.splitlines():
        match = _PIN.match(line.strip())
        if match and re.sub(r'[-_.]+', '-', match.group(1)).lower() == want:
            return match.group(2)
    return None


def overrides(lock=None, setuptools=None, python_name=None, locale=True):
    """tox's overrides (TOX_OVERRIDE entries) for the test environments.

    Set on testenv, so that they reach every test environment but not
    tox's packaging one (.pkg): a recent nova builds with a setuptools
    that knows its pyproject.toml, and there virtualenv's own seed stays.

    >>> overrides(None, '65.5.0')
    ['testenv.set_env+=VIRTUALENV_SETUPTOOLS=65.5.0', 'testenv.download=true']
    >>> overrides(None, None, 'python3.10')
    ... # doctest: +NORMALIZE_WHITESPACE
    ['testenv.base_python=python3.10',
     'tox.ignore_base_python_conflict=true']
    """
    result = []
    if lock:
        # tox's "constraints" setting (nova's tox.ini from 2025.2 on)
        # constrains deps but not the package's own dependencies
        # (install_package_deps); pip's own setting reaches every install
        result.append('testenv.set_env+=PIP_CONSTRAINT=%s' % lock)
    if setuptools:
        # virtualenv seeds that version (download: from PyPI, as it does
        # not bundle it)
        result += ['testenv.set_env+=VIRTUALENV_SETUPTOOLS=%s' % setuptools,
                   'testenv.download=true']
    if python_name:
        # nova's tox.ini names envs such as functional-py38: tox refuses
        # a base_python that conflicts with a name's factor unless told
        result += ['testenv.base_python=%s' % python_name,
                   'tox.ignore_base_python_conflict=true']
    if not locale:
        # nova's tox.ini sets LC_ALL=en_US.utf-8, which sphinx (docs,
        # releasenotes) fails on where that locale is not generated
        result.append('testenv.set_env+=LC_ALL=C.UTF-8')
    return result


def has_locale(name=NOVA_LOCALE):
    """True when the C library has the locale nova's tox.ini sets."""
    proc = subprocess.run(
        [sys.executable, '-c', 'import locale; locale.setlocale('
         'locale.LC_ALL, %r)' % name], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    return proc.returncode == 0


def environment(lock, lock_text, python_name=None, python_dir=None,
                locale=True, tox3=False,
                constraints=(toxini.TOX_CONSTRAINTS,)):
    """The variables to set for tox, in the order they are printed.

    python_name and python_dir: the line's interpreter (python3.10) and
    its folder, when it is not the Python tox runs on.  tox3: a tox 3 era
    tox.ini, which knows no TOX_OVERRIDE and hands tox's own environment
    to pip and virtualenv; constraints: the variables it reads its
    constraints from (toxini.constraint_variables).
    """
    env = []
    if python_dir:
        env.append(('PATH', '%s:$PATH' % python_dir))
    if tox3:
        if python_dir and python_name:
            # tox 3 takes its own interpreter for "python3" (the envs with
            # basepython = python3: functional) before any on PATH
            env.append(('TOX_DISCOVER', '%s/%s' % (python_dir, python_name)))
        env += [(name, str(lock)) for name in constraints]
        env.append(('PIP_CONSTRAINT', str(lock)))
        setuptools = pinned(lock_text, 'setuptools')
        if setuptools:
            env += [('VIRTUALENV_SETUPTOOLS', setuptools),
                    ('VIRTUALENV_DOWNLOAD', '1')]
        return env
    env.append(('TOX_CONSTRAINTS_FILE', str(lock)))
    found = overrides(lock, pinned(lock_text, 'setuptools'), python_name,
                      locale)
    if found:
        env.append(('TOX_OVERRIDE', ';'.join(found)))
    return env


def shell_command(tree, env, tox, args):
    """One line a developer can paste: cd TREE && VAR=VALUE... tox ARGS."""
    words = []
    for name, value in env:
        if name == 'PATH':
            words.append('PATH=%s:"$PATH"' % shlex.quote(
                value[:-len(':$PATH')]))
        else:
            words.append('%s=%s' % (name, shlex.quote(value)))
    return 'cd %s && %s' % (shlex.quote(str(tree)), ' '.join(
        words + [shlex.quote(str(tox))] + [shlex.quote(a) for a in args]))


def process_env(env, environ=None):
    """os.environ for tox with env applied.

    The TOX_* variables of an outer tox (tox -e gate-LINE sets
    TOX_WORK_DIR, TOX_ENV_DIR...) would configure this one: they go,
    and so do VIRTUAL_ENV and PYTHONPATH.
    """
    result = {k: v for k, v in dict(
        os.environ if environ is None else environ).items()
        if not k.startswith('TOX_') and
        k not in ('VIRTUAL_ENV', 'PYTHONPATH', 'PYTHONHOME')}
    for name, value in env:
        if name == 'PATH':
            value = value[:-len('$PATH')] + result.get('PATH', '')
        result[name] = value
    return result


def tox3_requirements(requires=()):
    """TOX3, with what a tox.ini's [tox] requires in place of its pins.

    tox 3 would provision a tox of its own (.tox/.tox) for a requirement
    its environment lacks, with pip under tox's environment, PIP_CONSTRAINT
    (the line's lock, for Python X.Y) included: ussuri's lock pins py
    1.8.1, which does not import on the tool's Python.  The tool's tox 3
    has them instead.

    >>> tox3_requirements(['virtualenv<20.8'])
    ['tox==3.28.0', 'virtualenv<20.8']
    >>> tox3_requirements() == list(TOX3)
    True
    """
    named = {_name(r) for r in requires}
    return [r for r in TOX3 if _name(r) not in named] + list(requires)


def _name(requirement):
    return re.sub(r'[-_.]+', '-', re.match(
        r'\s*([A-Za-z0-9_.-]*)', requirement).group(1)).lower()


def tox(root, tox3=False, requires=()):
    """tox, installed from PyPI with pip into .venvs/_tox (_tox3).

    requires: a tox 3 era tox.ini's [tox] requires, in a tox 3 of its
    own (.venvs/_tox3-HASH).
    """
    if not tox3:
        return venv.tool(root, 'tox', *TOX)
    wanted = tox3_requirements(requires)
    name = 'tox3'
    if wanted != list(TOX3):
        name += '-' + hashlib.sha256(
            '\n'.join(wanted).encode()).hexdigest()[:8]
    return venv.tool(root, name, *wanted, command='tox')


def python_of(base):
    """(name, folder, version) of the line's interpreter.

    name and folder are None when it is the Python tox runs on.
    """
    rt = runtime.pick(base, host_only=True)
    if tuple(rt.version) == tuple(sys.version_info[:2]):
        return None, None, tuple(rt.version)
    return (base.python, str(pathlib.Path(rt.python).parent),
            tuple(rt.version))


@dataclasses.dataclass
class Prepared:
    """A line's tree, and how its own tox.ini runs there."""

    tree: pathlib.Path
    # (name, value) to set for tox, as environment() gives them
    env: list
    # the tox executable
    exe: pathlib.Path
    # why tox 4 does not read the tox.ini (tox 3 runs it); [] for tox 4
    tox3: list
    # the line's Python, (major, minor)
    version: tuple
    # the text of the tree's tox.ini
    text: str = ''

    @property
    def tox(self):
        """'tox 3.28.0' or 'tox 4.67.17'."""
        return (TOX3 if self.tox3 else TOX)[0].replace('==', ' ')

    @property
    def unit_env(self):
        """The environment of the unit suite on the line's Python."""
        return toxini.unit_env(self.text, self.version)


def prepare(base, pristine=False, release=False):
    """Prepared: what running tox in the line's tree needs.

    release: in the release's own tree (build.build's release).
    """
    name, folder, version = python_of(base)
    tree = build.build(base, pristine=pristine, release=release)
    text = toxini.read(tree)
    reasons = toxini.tox3_reasons(text)
    lock = pathlib.Path(base.lock).resolve()
    if not lock.is_file():
        raise errors.UsageError('series %s has no lock file at %s' % (
            base.series, lock))
    env = environment(lock, lock.read_text(), name, folder, has_locale(),
                      bool(reasons), toxini.constraint_variables(text))
    prepared = Prepared(tree, env, tox(base.root, bool(reasons),
                                       toxini.requires(text)),
                        reasons, version, text)
    progress.say('tox: %s, %s%s' % (
        progress.where(tree, base.root), prepared.tox,
        ' (tox.ini: %s)' % '; '.join(reasons) if reasons else ''),
        once=True)
    return prepared


def run(base, args, pristine=False, prepared=None, capture=False):
    """Run tox ARGS in the line's tree, printing the command first.

    Returns the exit code, or with capture (the output is still shown as
    it comes) (exit code, output).  prepared: what prepare() returned.
    """
    prepared = prepared or prepare(base, pristine)
    tree, env, exe = prepared.tree, prepared.env, prepared.exe
    print('+ ' + shell_command(tree, env, exe, args), flush=True)
    cmd = [str(exe)] + list(args)
    if not capture:
        return subprocess.run(cmd, cwd=tree, env=process_env(env)).returncode
    lines = []
    with subprocess.Popen(cmd, cwd=tree, env=process_env(env),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors='replace') as proc:
        for line in proc.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            lines.append(line)
    return proc.returncode, ''.join(lines)
