"""The fork as a source tarball, made by pbr's own sdist (nova-fork sdist).

For operators who build nova from a tarball (kolla-build's ``type =
local``): the line's fork (``build/LABEL``), packed the way upstream packs
nova, with a version that says it is patched.

The version is the release's with a post-release segment whose number is
the bug's id (``[bug] id``): ``34.0.0.post1860555``.  It is a valid PEP 440
version that pip, setuptools and pbr take; it sorts after the release it
patches and before the next one (34.0.0 < 34.0.0.post1860555 < 34.0.1), so
an upgrade from the release installs it and the next release replaces it.
A local version (``34.0.0+lp1860555``) names the bug better but is refused
at run time: nova reports its version through ``pbr.version.VersionInfo``,
whose ``SemanticVersion`` rejects local labels in every pbr up to 6.1.1
("Unknown remainder ['+lp1860555']"), the pbr of every line's constraints
but master's; pbr reads a post-release as a dev release of the next patch
(34.0.1.dev1860555), which it does parse.

How the tarball is made: in a clone of the tree's HEAD (so the tree itself
is not touched) with ``PBR_VERSION`` set, and pbr's generated AUTHORS,
ChangeLog and release notes skipped, so that those stay upstream's (the
fork's git history is not nova's).  A release that declares a PEP 517
build system in pyproject.toml (master's ``pbr.build``) is built as it
declares, with ``uv build --sdist`` in an isolated environment and the
line's own pbr pinned; the others (setup.py and setup.cfg only) with
``python setup.py sdist`` in the line's venv, whose setuptools and pbr are
of the release's era (rocky: Python 2.7, pbr 4.2.0).  The lines' venvs
cannot build master's: setuptools 65.5 does not read its PEP 639
``license``.
"""

import os
import pathlib
import re
import shutil
import subprocess
import tarfile
import time

from nova_fork import config
from nova_fork.env import novatox
from nova_fork.env import runner
from nova_fork.env import runtime
from nova_fork.env import venv
from nova_fork import errors
from nova_fork.tree import build
from nova_fork.tree import gitutils

# pbr's switches for what it would generate from git: keep upstream's.
PBR_SKIP = ('SKIP_GENERATE_AUTHORS', 'SKIP_WRITE_GIT_CHANGELOG',
            'SKIP_GENERATE_RENO')

# for pip's wheel builds where the line's lock has no wheel (Python 3.8+;
# rocky's lock pins one)
WHEEL = 'wheel<0.46'

_RELEASE = re.compile(r'^\d+(\.\d+)*$')
_BUILD_SYSTEM = re.compile(r'^\[build-system\]\s*$(.*?)(?=^\[|\Z)',
                           re.M | re.S)
_BACKEND = re.compile(r'^build-backend\s*=\s*["\']([^"\']+)["\']', re.M)

_PURELIB = ('import sysconfig; print(sysconfig.get_paths()["purelib"])')
_WHERE = ('import nova, nova.version as v; print(nova.__file__); '
          'print(v.version_info.release_string())')


def dist_dir(root, label):
    return pathlib.Path(root) / 'dist' / 'sdist' / label


def patched_version(release, bug_id):
    """The version of the patched tarball: RELEASE.postBUG.

    >>> patched_version('34.0.0', '1860555')
    '34.0.0.post1860555'
    >>> patched_version('29.2.0', 'lp1860555')
    Traceback (most recent call last):
    ...
    nova_fork.errors.UsageError: bases.ini: [bug] id must be a number to \
make the version 29.2.0.postID, not 'lp1860555'
    """
    if not _RELEASE.match(release):
        raise errors.UsageError(
            'nova %s is not a final release (X.Y.Z); a patched tarball is '
            'made of a final release only' % release)
    if not str(bug_id).isdigit():
        raise errors.UsageError(
            '%s: [bug] id must be a number to make the version %s.postID, '
            'not %r' % (config.BASES_FILE, release, bug_id))
    return '%s.post%d' % (release, int(bug_id))


def build_backend(pyproject_text):
    """The PEP 517 backend pyproject.toml declares, or None.

    >>> build_backend('[build-system]\\nrequires = ["pbr>=6.1.1"]\\n'
    ...               'build-backend = "pbr.build"\\n\\n[project]\\n')
    'pbr.build'
    >>> build_backend('[tool.black]\\nbuild-backend = "x"\\n') is None
    True
    """
    section = _BUILD_SYSTEM.search(pyproject_text or '')
    if not section:
        return None
    backend = _BACKEND.search(section.group(1))
    return backend.group(1) if backend else None


def tarball_problems(members, read, version, expected):
    """What is wrong with a tarball's contents, as a list of sentences.

    members: its member names; read(name) the bytes of one; version: the
    one PKG-INFO must give; expected: {path in nova's tree: bytes} of the
    files the fork changed, which must be there as they are in the fork.

    >>> files = {'nova-1.0.post9/PKG-INFO': b'Version: 1.0.post9\\n',
    ...          'nova-1.0.post9/nova/a.py': b'fixed\\n'}
    >>> tarball_problems(list(files), files.get, '1.0.post9',
    ...                  {'nova/a.py': b'fixed\\n'})
    []
    >>> files['nova-1.0.post9/.git/HEAD'] = b''
    >>> tarball_problems(list(files), files.get, '1.0.post8',
    ...                  {'nova/a.py': b'old\\n', 'nova/b.py': b''})
    ... # doctest: +NORMALIZE_WHITESPACE
    ['PKG-INFO says version 1.0.post9, not 1.0.post8',
     'it holds git metadata: nova-1.0.post9/.git/HEAD',
     'nova/a.py differs from the fork', 'nova/b.py is missing']
    """
    problems = []
    top = {name.split('/', 1)[0] for name in members}
    if len(top) != 1:
        return ['it has %d top-level folders, not one' % len(top)]
    top = top.pop()
    info = read('%s/PKG-INFO' % top)
    if info is None:
        return ['it has no %s/PKG-INFO' % top]
    found = re.search(r'^Version: (\S+)', info.decode('utf-8', 'replace'),
                      re.M)
    found = found.group(1) if found else None
    if found != version:
        problems.append('PKG-INFO says version %s, not %s' % (found, version))
    git = sorted(name for name in members if '.git' in name.split('/'))
    if git:
        problems.append('it holds git metadata: %s' % git[0])
    names = set(members)
    for path, data in sorted(expected.items()):
        name = '%s/%s' % (top, path)
        if name not in names:
            problems.append('%s is missing' % path)
        elif read(name) != data:
            problems.append('%s differs from the fork' % path)
    return problems


def installed_from(nova_file, purelib):
    """True when nova's __init__ is the one installed in purelib.

    >>> installed_from('/v/lib/site-packages/nova/__init__.py',
    ...                '/v/lib/site-packages')
    True
    >>> installed_from('/p/build/master/nova/__init__.pyc',
    ...                '/v/lib/site-packages')
    False
    """
    nova_dir = os.path.dirname(os.path.normpath(nova_file))
    return os.path.dirname(nova_dir) == os.path.normpath(purelib)


def pth_line(site_packages, with_pth=False):
    """A .pth line that adds another venv's site-packages.

    with_pth also reads the .pth files there, which make the namespace
    packages of rocky's venv (repoze.lru) importable.  pip's isolated
    build (a PEP 517 release) takes out what a plain path line adds, but
    not what such an import line adds: install with the plain one.

    >>> pth_line('/v/site-packages')
    '/v/site-packages\\n'
    >>> pth_line('/v/site-packages', with_pth=True)
    "import site; site.addsitedir('/v/site-packages')\\n"
    """
    if with_pth:
        return 'import site; site.addsitedir(%r)\n' % str(site_packages)
    return '%s\n' % site_packages


def nova_in(purelib):
    """What of an installed nova a site-packages folder holds."""
    folder = pathlib.Path(purelib)
    found = [folder / 'nova'] if (folder / 'nova').is_dir() else []
    for pattern in ('nova-*.dist-info', 'nova-*.egg-info', 'nova.egg-link',
                    '__editable__*nova*'):
        found += sorted(folder.glob(pattern))
    return found


def changed_files(tree, release):
    """The files the fork adds or changes, relative to the tree."""
    return gitutils.out(tree, 'diff', '--name-only', '--no-renames',
                        '--diff-filter=d', release, 'HEAD').splitlines()


def first_error(text):
    """The line of a build's output that says what failed, or None.

    pip and setuptools end with wrappers ("metadata-generation-failed",
    "See above"); the first error line is the cause.

    >>> first_error('running dist_info\\n  error: invalid command '
    ...             '\\'bdist_wheel\\'\\nerror: metadata-generation-failed\\n')
    "error: invalid command 'bdist_wheel'"
    >>> first_error('all fine') is None
    True
    """
    for line in text.splitlines():
        line = line.strip()
        if re.match(r'(error|\w*Error)\b:?', line) and \
                not line.startswith('error: subprocess-exited'):
            return line
    return None


def _run(rt, cmd, what, cwd=None, env=None):
    proc = rt.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                  stderr=subprocess.STDOUT, text=True)
    if proc.returncode:
        raise errors.PackageError('%s failed (exit %d): %s' % (
            what, proc.returncode,
            first_error(proc.stdout) or venv._tail(proc)))
    return proc.stdout


def _env(extra=()):
    env = runner.environ()
    env.update(extra)
    return env


def declared_backend(tree):
    """The PEP 517 backend the tree's pyproject.toml declares, or None."""
    pyproject = pathlib.Path(tree) / 'pyproject.toml'
    return build_backend(pyproject.read_text()) if pyproject.is_file() \
        else None


def make(base, tree, src, out, version):
    """Build the tarball of clone src into out: (its path, how)."""
    rt = runtime.pick(base)
    env = _env(dict({name: '1' for name in PBR_SKIP}, PBR_VERSION=version))
    backend = declared_backend(src)
    if backend:
        if rt.in_root:
            raise errors.UsageError(
                'nova %s declares a PEP 517 build (%s), which nova-fork '
                'builds with uv on the host; %s is in a Debian root' % (
                    base.nova, backend, rt.describe()))
        pins = src.parent / 'build-constraints.txt'
        pbr = novatox.pinned(base.lock.read_text(), 'pbr') \
            if base.lock.is_file() else None
        pins.write_text('pbr==%s\n' % pbr if pbr else '')
        env['UV_PYTHON_DOWNLOADS'] = 'never'
        cmd = [str(venv.uv(base.root)), 'build', '--sdist', '--quiet',
               '--python', rt.python, '--build-constraint', str(pins),
               '--out-dir', str(out), str(src)]
        how = 'uv build --sdist (%s, pbr %s)' % (backend, pbr or 'any')
    else:
        python = venv.ensure(base)
        cmd = [str(python), 'setup.py', '-q', 'sdist', '--dist-dir',
               str(out)]
        how = 'python setup.py sdist (%s venv)' % base.series
    _run(rt, cmd, 'building the tarball of %s with %s' % (tree, how),
         cwd=src, env=env)
    # uv marks its output folder with a .gitignore of its own
    (out / '.gitignore').unlink(missing_ok=True)
    made = sorted(out.glob('*.tar.gz'))
    if len(made) != 1:
        raise errors.PackageError('%s made %d tarballs in %s, not one' % (
            how, len(made), out))
    return made[0], how


def check_contents(tarball, tree, src, base, version):
    expected = {path: (src / path).read_bytes()
                for path in changed_files(tree, base.nova)}
    with tarfile.open(tarball) as tar:
        members = {m.name: m for m in tar.getmembers()}

        def read(name):
            member = members.get(name)
            if member is None or not member.isfile():
                return None
            return tar.extractfile(member).read()

        problems = tarball_problems(list(members), read, version, expected)
    if problems:
        raise errors.PackageError(
            '%s: %s' % (tarball.name, '; '.join(problems)))
    return len(expected)


def _scratch_venv(base, rt, path):
    """A bare venv of the line's interpreter, without pip or setuptools."""
    if tuple(rt.version) >= (3,):
        cmd, env = [rt.python, '-m', 'venv', '--without-pip', str(path)], None
    else:
        flags = ['-q', '--no-pip', '--no-setuptools', '--no-wheel', '-p',
                 rt.python, str(path)]
        if rt.in_root:
            cmd = ['python3', '-m', 'virtualenv'] + flags
            env = dict(os.environ, PYTHONPATH=runtime.ROOT_VIRTUALENV)
        else:
            cmd = [str(venv.tool(base.root, 'virtualenv', venv.VIRTUALENV))
                   ] + flags
            env = None
    _run(rt, cmd, 'creating a scratch venv with %s' % rt.python, env=env)
    return path / 'bin' / 'python'


def _purelib(rt, python):
    return _run(rt, [str(python), '-c', _PURELIB],
                'asking %s for its site-packages' % python).strip()


def install_check(base, tarball, tree, work, tests):
    """Install the tarball in a scratch venv over the line's; run tests.

    The scratch venv sees the line venv's packages through a .pth file,
    nova only from the tarball; the line venv is not changed.  Returns
    [(step, seconds)].
    """
    rt = runtime.pick(base)
    times = []
    line_python = venv.ensure(base)
    line_lib = _purelib(rt, line_python)
    found = nova_in(line_lib)
    if found:
        raise errors.UsageError(
            'the %s venv has nova installed (%s), which installing the '
            'tarball over it would replace; remove %s and run "nova-fork '
            'venv %s"' % (base.series, found[0], line_python.parent.parent,
                          base.series))
    start = time.monotonic()
    python = _scratch_venv(base, rt, work / 'venv')
    lib = _purelib(rt, python)
    pth = pathlib.Path(lib, 'nova-fork-line.pth')
    pth.write_text(pth_line(line_lib))
    pip = [str(python), '-m', 'pip', 'install', '-q',
           '--disable-pip-version-check', '--no-deps']
    if not declared_backend(tree):
        # setup.py only: built with the line's setuptools and pbr; a
        # PEP 517 release is built isolated, as it declares.  pip builds
        # a wheel, which the setuptools of these locks cannot without the
        # wheel package, which not every lock has.
        if not novatox.pinned(base.lock.read_text(), 'wheel'):
            _run(rt, pip + [WHEEL], 'pip install %s' % WHEEL, env=_env())
        pip += ['--no-index', '--no-build-isolation']
    _run(rt, pip + [str(tarball)], 'pip install %s' % tarball.name,
         env=_env())
    times.append(('install', time.monotonic() - start))
    if nova_in(line_lib):
        raise errors.PackageError('installing the tarball changed the %s '
                                  'venv' % base.series)
    for path in changed_files(tree, base.nova):
        if path.startswith('nova/') and path.endswith('.py'):
            installed = pathlib.Path(lib, path)
            if not installed.is_file() or \
                    installed.read_bytes() != (work / 'src' / path
                                               ).read_bytes():
                raise errors.PackageError(
                    'the installed %s is not the fork\'s' % path)
    pth.write_text(pth_line(line_lib, with_pth=True))
    # nova's tests find etc/nova/api-paste.ini under state_path, which is
    # the folder above the nova package: the source tree's layout.  pip
    # installs those data files under the venv's prefix; show them there.
    paste = work / 'venv' / 'etc' / 'nova' / 'api-paste.ini'
    if not paste.is_file():
        raise errors.PackageError('installing %s put no etc/nova/'
                                  'api-paste.ini in the venv' % tarball.name)
    pathlib.Path(lib, 'etc').symlink_to(work / 'venv' / 'etc')
    run_dir = work / 'run'
    run_dir.mkdir()
    env = runner.environ(python, base.setenv)
    # nova.version asks pbr, which must parse the patched version
    out = _run(rt, [str(python), '-c', _WHERE], 'importing the installed '
               'nova and asking nova.version', cwd=run_dir, env=env)
    where, says = ([''] * 2 + out.strip().splitlines())[-2:]
    if not installed_from(where, lib):
        raise errors.PackageError('nova imports from %s, not from the '
                                  'scratch venv\'s %s' % (where, lib))
    print('nova imports from %s; nova.version says %s' % (where, says),
          flush=True)
    start = time.monotonic()
    # the line's stestr, its workers the scratch venv's python (first on
    # PATH), discovering the installed tests; its repository in run_dir
    stestr = [str(line_python.parent / 'stestr'),
              '--test-path=%s' % pathlib.Path(lib, 'nova', 'tests',
                                              'functional'),
              '--top-dir=%s' % lib, 'run']
    proc = rt.run(stestr + list(tests), cwd=run_dir, env=env)
    times.append(('tests', time.monotonic() - start))
    if proc.returncode:
        raise errors.TestFailure(
            'the tests of the installed tarball failed (exit %d): %s' % (
                proc.returncode, ' '.join(tests)))
    return times


def sdist(base, check=False, tests=()):
    """Write the fork's tarball to dist/sdist/LABEL/; return (path, notes).

    Everything is made in a folder beside dist/sdist/LABEL/, which
    replaces it only when the tarball is built and checked.
    """
    version = patched_version(base.nova, config.load_bug(base.root).id)
    tree = build.build(base)
    dest = dist_dir(base.root, base.label)
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.parent / ('.%s.partial-%d' % (base.label, os.getpid()))
    build.remove_stale_partials(dest.parent, base.label)
    shutil.rmtree(partial, ignore_errors=True)
    notes = []
    try:
        partial.mkdir()
        src = partial / 'src'
        gitutils.git(partial, 'clone', '-q', '--shared', str(tree), str(src))
        start = time.monotonic()
        tarball, how = make(base, tree, src, partial / base.label, version)
        notes.append('built with %s in %.1f s' % (
            how, time.monotonic() - start))
        count = check_contents(tarball, tree, src, base, version)
        notes.append('%s: version %s, the %d files the fork changes as in '
                     '%s, no .git' % (tarball.name, version, count, tree))
        if check:
            times = install_check(base, tarball, tree, partial,
                                  tests or base.regression)
            notes.append('installed and tested: %s' % ', '.join(
                '%s %.1f s' % step for step in times))
        if dest.exists():
            shutil.rmtree(dest)
        (partial / base.label).rename(dest)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return dest / tarball.name, notes
