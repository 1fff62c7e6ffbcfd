"""The uv provider: interpreters where the host has no pyenv."""

import dataclasses
import os
import pathlib
import platform
import shutil
import sys
import textwrap

import fixtures
import testtools

from nova_fork import config
from nova_fork.env import runtime
from nova_fork import errors
from nova_fork.tests.env import test_runtime
from nova_fork.tests import fakes

PROJECT = pathlib.Path(__file__).resolve().parents[3]

# uv as the provider uses it: "python find" prints the managed
# interpreter of a version (from FAKE_UV_DIR), "python install" makes one
# there, unless downloads are not allowed.  Each call is logged.
FAKE_UV = textwrap.dedent('''\
    #!%(python)s
    import os, pathlib, sys
    folder = pathlib.Path(os.environ['FAKE_UV_DIR'])
    with open(folder / 'calls', 'a') as log:
        log.write(' '.join(sys.argv[1:]) + ' VIRTUAL_ENV=%%s\\n'
                  %% os.environ.get('VIRTUAL_ENV', ''))
    args = [a for a in sys.argv[1:] if not a.startswith('-') and
            a not in ('only-managed',)]
    verb, version = args[1], args[2]
    found = sorted(folder.glob('cpython-%%s.*/bin/python%%s'
                               %% (version, version)))
    if verb == 'find':
        if found:
            print(found[-1])
            sys.exit(0)
        sys.exit('error: No interpreter found for Python %%s in virtual '
                 'environments or managed installations' %% version)
    if os.environ.get('UV_PYTHON_DOWNLOADS') == 'never':
        sys.exit('error: Python downloads are not allowed '
                 '(`python-downloads = "never"`).')
    made = folder / ('cpython-%%s.99-linux' %% version) / 'bin'
    made.mkdir(parents=True)
    (made / ('python' + version)).touch()
''')


class FakeUv(fixtures.Fixture):
    """A fake uv executable and its folder of managed interpreters."""

    def __init__(self, installed=()):
        super().__init__()
        self.installed = installed

    def _setUp(self):
        self.folder = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        self.exe = self.folder / 'uv'
        self.exe.write_text(FAKE_UV % {'python': sys.executable})
        self.exe.chmod(0o755)
        self.useFixture(fixtures.EnvironmentVariable(
            'FAKE_UV_DIR', str(self.folder)))
        self.useFixture(fixtures.EnvironmentVariable('UV_PYTHON_DOWNLOADS'))
        self.useFixture(fixtures.EnvironmentVariable('VIRTUAL_ENV', '/v'))
        for version in self.installed:
            minor = '.'.join(version.split('.')[:2])
            self.python(version, minor).touch()

    def python(self, version, minor):
        folder = self.folder / ('cpython-%s-linux' % version) / 'bin'
        folder.mkdir(parents=True, exist_ok=True)
        return folder / ('python' + minor)

    @property
    def calls(self):
        log = self.folder / 'calls'
        return log.read_text().splitlines() if log.exists() else []


class UvProviderTest(test_runtime.RuntimeTestBase):

    def base(self, python='python3.9', runtime=('path', 'pyenv', 'uv')):
        return super().base(python, runtime)

    def test_a_uv_managed_interpreter(self):
        uv = self.useFixture(FakeUv(installed=['3.9.18']))
        self.useFixture(test_runtime.Host(on_path={'uv': str(uv.exe)}))
        rt = runtime.pick(self.base())
        self.assertEqual(('uv', str(uv.python('3.9.18', '3.9')), (3, 9)),
                         (rt.provider, rt.python, rt.version))
        self.assertEqual('python3.9 (uv)', rt.describe())
        self.assertFalse(rt.in_root)
        # only uv's own installations: no project, no caller's venv
        self.assertEqual(['python find --no-project --python-preference '
                          'only-managed 3.9 VIRTUAL_ENV='], uv.calls)

    def test_uv_installs_the_version_it_lacks(self):
        uv = self.useFixture(FakeUv())
        self.useFixture(test_runtime.Host(on_path={'uv': str(uv.exe)}))
        rt = runtime.pick(self.base())
        self.assertEqual(('uv', str(uv.python('3.9.99', '3.9'))),
                         (rt.provider, rt.python))
        self.assertEqual(['find', 'install', 'find'],
                         [call.split()[1] for call in uv.calls])

    def test_the_uv_of_the_tool_where_path_has_none(self):
        uv = self.useFixture(FakeUv(installed=['3.11.7']))
        self.useFixture(test_runtime.Host())
        tool = self.project.root / runtime.UV_OF_THE_TOOL
        tool.parent.mkdir(parents=True)
        shutil.copy(uv.exe, tool)
        rt = runtime.pick(self.base('python3.11'))
        self.assertEqual('uv', rt.provider)
        self.assertEqual(1, len(uv.calls))

    def test_the_venv_tool_installs_uv_where_the_provider_looks(self):
        self.assertEqual(pathlib.PurePath('.venvs/_uv/bin/uv'),
                         runtime.UV_OF_THE_TOOL)

    def test_path_and_pyenv_come_first(self):
        uv = self.useFixture(FakeUv(installed=['3.9.18']))
        self.useFixture(test_runtime.Host(
            on_path={'uv': str(uv.exe), 'python3.9': '/usr/bin/python3.9'}))
        self.assertEqual('path', runtime.pick(self.base()).provider)
        self.assertEqual([], uv.calls)

    def test_downloads_not_allowed(self):
        uv = self.useFixture(FakeUv())
        host = self.useFixture(test_runtime.Host(
            on_path={'uv': str(uv.exe)}))
        self.useFixture(fixtures.EnvironmentVariable(
            'UV_PYTHON_DOWNLOADS', 'never'))
        exc = self.assertRaises(errors.UsageError, runtime.pick, self.base())
        self.assertEqual(
            'python3.9, which series fake runs its tests on, was not found: '
            'on PATH (none), in pyenv (no 3.9 under %s/versions), with uv '
            '(uv python install 3.9 failed: error: Python downloads are not '
            'allowed (`python-downloads = "never"`).), and the base lists no '
            'Debian root; install it (pyenv install 3.9, uv python install '
            '3.9, apt-get install python3.9) or add debian:bullseye to its '
            'runtime in bases.ini' % host.pyenv_root, str(exc))
        self.assertEqual(2, exc.exit_code)

    def test_no_uv(self):
        self.useFixture(test_runtime.Host())
        exc = self.assertRaises(errors.UsageError, runtime.pick, self.base())
        self.assertIn('with uv (no uv on PATH or in .venvs/_uv)', str(exc))

    def test_uv_has_no_python_2(self):
        uv = self.useFixture(FakeUv())
        self.useFixture(test_runtime.Host(on_path={'uv': str(uv.exe)}))
        exc = self.assertRaises(errors.UsageError, runtime.pick,
                                self.base('python2.7'))
        self.assertIn('with uv (uv has no Python 2.7)', str(exc))
        self.assertIn('install it (pyenv install 2.7, apt-get install '
                      'python2.7) or add debian:bullseye', str(exc))
        self.assertEqual([], uv.calls)

    def test_bases_ini_takes_uv(self):
        project = self.useFixture(fakes.FakeProject())
        ini = project.root / 'bases.ini'
        ini.write_text(ini.read_text() + 'runtime = uv debian:trixie\n')
        self.assertEqual(('uv', 'debian:trixie'),
                         config.get_base(project.root, 'fake').runtime)


def real_uv():
    """uv of this host (PATH, or the project's .venvs/_uv), or None."""
    found = shutil.which('uv')
    local = PROJECT / runtime.UV_OF_THE_TOOL
    return found or (str(local) if local.is_file() else None)


class RealUvTest(testtools.TestCase):
    """uv itself, offline, with a managed installation made by hand.

    The folder of uv's installations (UV_PYTHON_INSTALL_DIR) gets one
    entry named as uv names them, whose bin/ links to the interpreter that
    runs these tests; downloads are not allowed.
    """

    def setUp(self):
        super().setUp()
        exe = real_uv()
        if not exe:
            self.skipTest('no uv on this host (PATH or .venvs/_uv)')
        self.project = self.useFixture(fakes.FakeProject())
        self.folder = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        self.useFixture(fixtures.EnvironmentVariable(
            'PATH', '%s:%s' % (pathlib.Path(exe).parent,
                               os.environ.get('PATH', ''))))
        self.useFixture(fixtures.EnvironmentVariable(
            'UV_PYTHON_INSTALL_DIR', str(self.folder)))
        self.useFixture(fixtures.EnvironmentVariable(
            'UV_PYTHON_DOWNLOADS', 'never'))
        self.useFixture(fixtures.EnvironmentVariable('UV_OFFLINE', '1'))
        self.useFixture(fixtures.EnvironmentVariable('UV_NO_CONFIG', '1'))
        self.minor = '%d.%d' % sys.version_info[:2]
        self.base = dataclasses.replace(
            config.get_base(self.project.root, 'fake'),
            python='python' + self.minor, runtime=('uv',))

    def test_finds_the_managed_interpreter(self):
        key = 'cpython-%d.%d.%d-linux-%s-gnu' % (
            sys.version_info[:3] + (platform.machine(),))
        interpreter = os.path.realpath(sys.executable)
        bin_dir = self.folder / key / 'bin'
        bin_dir.mkdir(parents=True)
        for name in ('python' + self.minor, 'python3', 'python'):
            (bin_dir / name).symlink_to(interpreter)
        rt = runtime.pick(self.base)
        self.assertEqual('uv', rt.provider)
        self.assertEqual(sys.version_info[:2], rt.version)
        self.assertEqual(interpreter, os.path.realpath(rt.python))

    def test_none_and_no_downloads(self):
        exc = self.assertRaises(errors.UsageError, runtime.pick, self.base)
        self.assertIn('with uv (uv python install %s failed: ' % self.minor,
                      str(exc))
        self.assertIn('uv python install %s' % self.minor, str(exc))
