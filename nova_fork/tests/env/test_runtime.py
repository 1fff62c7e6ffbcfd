"""Runtimes (which interpreter, where) and venv installers."""

import contextlib
import dataclasses
import io
import pathlib
import subprocess
from unittest import mock

import fixtures
import testtools

from nova_fork import cmd
from nova_fork import config
from nova_fork.env import chroot
from nova_fork.env import runtime
from nova_fork.env import venv
from nova_fork import errors
from nova_fork.tests import fakes

PROJECT = pathlib.Path(__file__).resolve().parents[3]


class Host(fixtures.Fixture):
    """A host with the given interpreters and nothing else.

    on_path: {name: executable} as shutil.which finds them; pyenv: version
    folders made under a temporary PYENV_ROOT; broken: executables that
    do not run.  Euid 0, and debootstrap installed unless told otherwise.
    """

    def __init__(self, on_path=None, pyenv=(), broken=(), root=True,
                 debootstrap=True):
        super().__init__()
        self.on_path = dict(on_path or {})
        self.pyenv = pyenv
        self.broken = set(broken)
        self.root = root
        self.debootstrap = debootstrap

    def _setUp(self):
        self.pyenv_root = pathlib.Path(
            self.useFixture(fixtures.TempDir()).path)
        self.useFixture(fixtures.EnvironmentVariable(
            'PYENV_ROOT', str(self.pyenv_root)))
        self.useFixture(fixtures.EnvironmentVariable('NOVA_FORK_CHROOT'))
        self.useFixture(fixtures.EnvironmentVariable('NOVA_FORK_INSTALLER'))
        for version in self.pyenv:
            folder = self.pyenv_root / 'versions' / version / 'bin'
            folder.mkdir(parents=True)
            for name in ('python%s' % '.'.join(version.split('.')[:2]),):
                (folder / name).touch()
        self.useFixture(fixtures.MockPatchObject(
            runtime.shutil, 'which', side_effect=self.which))
        self.useFixture(fixtures.MockPatchObject(
            chroot.shutil, 'which', side_effect=self.which))
        self.useFixture(fixtures.MockPatchObject(
            runtime, 'probe', side_effect=self.probe))
        self.useFixture(fixtures.MockPatchObject(
            chroot.os, 'geteuid', return_value=0 if self.root else 1000))

    def which(self, name):
        if name == 'debootstrap':
            return '/usr/sbin/debootstrap' if self.debootstrap else None
        return self.on_path.get(name)

    def probe(self, python):
        if python in self.broken or not (
                python in self.on_path.values() or pathlib.Path(python)
                .is_file()):
            return None
        name = pathlib.Path(python).name
        return tuple(int(n) for n in name[len('python'):].split('.')), python


class RuntimeTestBase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        self.fake = config.get_base(self.project.root, 'fake')

    def base(self, python='python3.9', runtime=('path', 'pyenv')):
        return dataclasses.replace(self.fake, python=python, runtime=runtime)


class PickTest(RuntimeTestBase):

    def test_path_comes_first(self):
        self.useFixture(Host(on_path={'python3.9': '/usr/bin/python3.9'},
                             pyenv=['3.9.18']))
        rt = runtime.pick(self.base())
        self.assertEqual(('path', '/usr/bin/python3.9', (3, 9)),
                         (rt.provider, rt.python, rt.version))
        self.assertFalse(rt.in_root)
        self.assertEqual(self.project.root / '.venvs' / 'fake', rt.venv_dir)

    def test_the_bases_order_wins(self):
        host = self.useFixture(Host(
            on_path={'python3.9': '/usr/bin/python3.9'}, pyenv=['3.9.18']))
        rt = runtime.pick(self.base(runtime=('pyenv', 'path')))
        self.assertEqual('pyenv', rt.provider)
        self.assertEqual(str(host.pyenv_root / 'versions/3.9.18/bin/'
                             'python3.9'), rt.python)

    def test_pyenv_takes_the_newest_of_that_version(self):
        host = self.useFixture(Host(pyenv=[
            '3.9.2', '3.9.18', '3.9.10', '3.10.1', '3.90.1', '3.11.7']))
        rt = runtime.pick(self.base())
        self.assertEqual(('pyenv', (3, 9)), (rt.provider, rt.version))
        self.assertEqual(host.pyenv_root / 'versions/3.9.18/bin/python3.9',
                         pathlib.Path(rt.python))

    def test_pyenv_skips_a_version_that_does_not_run(self):
        host = self.useFixture(Host(pyenv=['3.9.2', '3.9.18']))
        versions = host.pyenv_root / 'versions'
        host.broken.add(str(versions / '3.9.18/bin/python3.9'))
        self.assertEqual(str(versions / '3.9.2/bin/python3.9'),
                         runtime.pick(self.base()).python)
        host.broken.add(str(versions / '3.9.2/bin/python3.9'))
        exc = self.assertRaises(errors.UsageError, runtime.pick, self.base())
        self.assertIn('in pyenv (%s does not run)'
                      % (versions / '3.9.18/bin/python3.9'), str(exc))

    def test_a_shim_that_does_not_run_does_not_count(self):
        shim = '/root/.pyenv/shims/python3.9'
        self.useFixture(Host(on_path={'python3.9': shim}, broken=[shim],
                             pyenv=['3.9.18']))
        self.assertEqual('pyenv', runtime.pick(self.base()).provider)

    def test_debian_root_where_the_host_has_none(self):
        self.useFixture(Host(on_path={'python3.11': '/usr/bin/python3.11'}))
        rt = runtime.pick(self.base(
            'python2.7', ('path', 'pyenv', 'debian:bullseye')))
        self.assertEqual(('debian:bullseye', 'bullseye', '/usr/bin/python2.7',
                          (2, 7)),
                         (rt.provider, rt.suite, rt.python, rt.version))
        self.assertEqual(self.project.root / '.cache/chroot/bullseye',
                         rt.root)
        self.assertEqual(self.project.root / '.venvs' / 'fake-bullseye',
                         rt.venv_dir)
        self.assertEqual('chroot', rt.where)

    def test_the_first_suite_that_has_the_interpreter(self):
        self.useFixture(Host())
        rt = runtime.pick(self.base(
            'python3.11', ('debian:bullseye', 'debian:bookworm')))
        self.assertEqual(('debian:bookworm', (3, 11)),
                         (rt.provider, rt.version))

    def test_nova_fork_chroot_forces_the_listed_root(self):
        self.useFixture(Host(on_path={'python2.7': '/usr/bin/python2.7'}))
        base = self.base('python2.7', ('path', 'debian:bullseye'))
        self.assertEqual('path', runtime.pick(base).provider)
        self.useFixture(fixtures.EnvironmentVariable('NOVA_FORK_CHROOT', '1'))
        self.assertEqual('debian:bullseye', runtime.pick(base).provider)
        # a base that lists no root stays on the host
        self.assertEqual('path', runtime.pick(
            self.base('python2.7', ('path',))).provider)

    def test_host_only_leaves_the_root_out(self):
        self.useFixture(Host())
        base = self.base('python2.7', ('path', 'debian:bullseye'))
        self.assertEqual('debian:bullseye', runtime.pick(base).provider)
        exc = self.assertRaises(errors.UsageError, runtime.pick, base,
                                host_only=True)
        self.assertIn('this command runs on the host only', str(exc))


class MissingInterpreterTest(RuntimeTestBase):

    def test_names_the_interpreter_and_the_ways_to_provide_it(self):
        host = self.useFixture(Host(on_path={
            'python3.11': '/usr/bin/python3.11'}, pyenv=['3.10.1']))
        exc = self.assertRaises(errors.UsageError, runtime.pick, self.base())
        self.assertEqual(
            'python3.9, which series fake runs its tests on, was not found: '
            'on PATH (none), in pyenv (no 3.9 under %s/versions), and the '
            'base lists no Debian root; install it (pyenv install 3.9, '
            'apt-get install python3.9) or add uv or debian:bullseye to its '
            'runtime in bases.ini' % host.pyenv_root, str(exc))
        self.assertEqual(2, exc.exit_code)

    def test_pyenv_under_home_is_shown_short(self):
        self.useFixture(Host())
        home = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        self.useFixture(fixtures.EnvironmentVariable('PYENV_ROOT'))
        self.useFixture(fixtures.EnvironmentVariable('HOME', str(home)))
        exc = self.assertRaises(errors.UsageError, runtime.pick, self.base())
        self.assertIn('in pyenv (no 3.9 under ~/.pyenv/versions)', str(exc))

    def test_a_root_that_cannot_be_made(self):
        self.useFixture(Host(debootstrap=False))
        exc = self.assertRaises(errors.UsageError, runtime.pick, self.base(
            'python2.7', ('path', 'pyenv', 'debian:bullseye')))
        self.assertIn(
            'was not found: on PATH (none), in pyenv (no 2.7 under ',
            str(exc))
        self.assertIn(
            ', and in a Debian bullseye root (making it needs debootstrap: '
            'apt-get install debootstrap); install it (pyenv install 2.7, '
            'apt-get install python2.7)', str(exc))
        self.assertNotIn('add debian:', str(exc))

    def test_not_root(self):
        self.useFixture(Host(root=False))
        exc = self.assertRaises(errors.UsageError, runtime.pick, self.base(
            'python2.7', ('debian:bullseye',)))
        self.assertIn('in a Debian bullseye root (it needs root: run as '
                      'root)', str(exc))

    def test_a_suite_without_the_interpreter(self):
        self.useFixture(Host())
        exc = self.assertRaises(errors.UsageError, runtime.pick, self.base(
            'python2.7', ('path', 'debian:bookworm')))
        self.assertIn('in a Debian bookworm root (bookworm has only '
                      'python3.11)', str(exc))
        self.assertIn('or add debian:bullseye to its runtime', str(exc))
        self.assertNotIn('uv', str(exc))

    def test_forced_root(self):
        self.useFixture(Host(on_path={'python2.7': '/usr/bin/python2.7'},
                             debootstrap=False))
        self.useFixture(fixtures.EnvironmentVariable('NOVA_FORK_CHROOT', '1'))
        exc = self.assertRaises(errors.UsageError, runtime.pick, self.base(
            'python2.7', ('path', 'debian:bullseye')))
        self.assertIn('was not found: in a Debian bullseye root (making it '
                      'needs debootstrap', str(exc))
        self.assertIn('NOVA_FORK_CHROOT=1 leaves out the host; unset '
                      'NOVA_FORK_CHROOT', str(exc))

    def test_one_line_and_exit_2_from_main(self):
        self.useFixture(Host())
        ini = self.project.root / 'bases.ini'
        ini.write_text(ini.read_text().replace('python = python3\n',
                                               'python = python3.9\n'))
        (self.project.root / 'locks').mkdir()
        (self.project.root / 'locks' / 'fake.txt').write_text('pip==1\n')
        with mock.patch('sys.stderr', new_callable=io.StringIO) as err:
            code = cmd.main(['venv', 'fake'])
        self.assertEqual(2, code)
        self.assertEqual(1, len(err.getvalue().splitlines()))
        self.assertIn('nova-fork: error: python3.9, which series fake runs '
                      'its tests on, was not found', err.getvalue())


class RunTest(RuntimeTestBase):

    def test_on_the_host(self):
        rt = runtime.Runtime(self.base(), 'path', '/usr/bin/python3.9',
                             (3, 9))
        with mock.patch.object(runtime.subprocess, 'run') as run:
            rt.run(['stestr', 'run'], cwd='/t', env={'A': '1'}, stdout=None)
        run.assert_called_once_with(['stestr', 'run'], cwd='/t',
                                    env={'A': '1'}, stdout=None)

    def test_in_the_root(self):
        base = self.base('python2.7', ('debian:bullseye',))
        rt = runtime.Runtime(base, 'debian:bullseye', '/usr/bin/python2.7',
                             (2, 7))
        root = self.project.root / '.cache/chroot/bullseye'
        mounts = []

        @contextlib.contextmanager
        def mounted(chroot_dir, project):
            mounts.append((chroot_dir, project))
            yield

        with mock.patch.object(chroot, 'provision') as provision, \
                mock.patch.object(chroot, 'mounted', mounted), \
                mock.patch.object(chroot, 'run') as run:
            rt.run(['/p/stestr', 'run'], cwd='/t', env={'PATH': '/v/bin'},
                   stdout=subprocess.PIPE)
        provision.assert_called_once_with(self.project.root, 'bullseye',
                                          'python2.7')
        self.assertEqual([(root, self.project.root)], mounts)
        run.assert_called_once_with(
            chroot.command(root, ['/p/stestr', 'run'], '/t'),
            env={'PATH': '/v/bin:/usr/sbin:/usr/bin:/sbin:/bin',
                 'PIP_CERT': '/etc/ssl/certs/ca-certificates.crt'},
            stdout=subprocess.PIPE)


class ConfigRuntimeTest(testtools.TestCase):

    def load(self, runtime_line):
        project = self.useFixture(fakes.FakeProject())
        ini = project.root / 'bases.ini'
        ini.write_text(ini.read_text() + runtime_line)
        return lambda: config.get_base(project.root, 'fake')

    def test_default(self):
        self.assertEqual(('path', 'pyenv'), self.load('')().runtime)

    def test_words(self):
        self.assertEqual(('debian:trixie', 'path'),
                         self.load('runtime = debian:trixie path\n')().runtime)

    def test_unknown_word(self):
        for word in ('conda', 'debian:buster', 'debian'):
            exc = self.assertRaises(errors.UsageError, self.load(
                'runtime = path %s\n' % word))
            self.assertEqual(
                "bases.ini: series fake: runtime '%s' is not one of path, "
                "pyenv, uv, debian:bullseye, debian:bookworm, debian:trixie"
                % word, str(exc))

    def test_the_projects_bases(self):
        bases = config.load_bases(PROJECT)
        self.assertEqual(('path', 'pyenv'), bases['2024.1'].runtime)
        self.assertEqual(('path', 'pyenv'), bases['master'].runtime)
        self.assertEqual(('path', 'pyenv', 'debian:bullseye'),
                         bases['rocky'].runtime)


class InstallerTest(RuntimeTestBase):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.EnvironmentVariable('NOVA_FORK_INSTALLER'))

    def rt(self, version, provider='path'):
        return runtime.Runtime(self.base(), provider, '/x/python', version)

    def test_uv_from_python_3_8_on_the_host(self):
        self.assertEqual('uv', venv.installer(self.rt((3, 11))))
        self.assertEqual('uv', venv.installer(self.rt((3, 8))))
        self.assertEqual('pip', venv.installer(self.rt((3, 7))))
        self.assertEqual('pip', venv.installer(self.rt((2, 7))))
        self.assertEqual('pip', venv.installer(
            self.rt((3, 9), 'debian:bullseye')))

    def test_forced(self):
        self.useFixture(fixtures.EnvironmentVariable(
            'NOVA_FORK_INSTALLER', 'pip'))
        self.assertEqual('pip', venv.installer(self.rt((3, 11))))
        self.useFixture(fixtures.EnvironmentVariable(
            'NOVA_FORK_INSTALLER', 'uv'))
        self.assertEqual('uv', venv.installer(self.rt((3, 11))))
        exc = self.assertRaises(errors.UsageError, venv.installer,
                                self.rt((2, 7)))
        self.assertEqual('NOVA_FORK_INSTALLER=uv, but uv makes no venvs for '
                         'Python 2.7 (only 3.8 and newer); unset it or set '
                         'it to pip', str(exc))
        exc = self.assertRaises(errors.UsageError, venv.installer,
                                self.rt((3, 9), 'debian:bullseye'))
        self.assertIn('inside the Debian bullseye root venvs are made with '
                      'pip', str(exc))

    def test_unknown_installer(self):
        self.useFixture(fixtures.EnvironmentVariable(
            'NOVA_FORK_INSTALLER', 'conda'))
        exc = self.assertRaises(errors.UsageError, venv.installer,
                                self.rt((3, 11)))
        self.assertIn('NOVA_FORK_INSTALLER=conda: it takes uv or pip',
                      str(exc))


class EnsureTest(RuntimeTestBase):
    """The commands that make and fill a venv, and the stamp."""

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.EnvironmentVariable('NOVA_FORK_INSTALLER'))
        self.lock = self.project.root / 'locks' / 'fake.txt'
        self.lock.parent.mkdir()
        self.lock.write_text('pip==23.2.1\nsix==1.0\n')
        self.venv = self.project.root / '.venvs' / 'fake'
        self.commands = []
        self.useFixture(fixtures.MockPatchObject(
            venv.subprocess, 'run', side_effect=self.fake_run))
        self.useFixture(fixtures.MockPatchObject(
            venv, 'uv', return_value=pathlib.Path('/t/uv')))
        self.useFixture(fixtures.MockPatchObject(
            venv, '_virtualenv', return_value=pathlib.Path('/t/virtualenv')))

    def fake_run(self, cmd, **kwargs):
        self.commands.append([str(c) for c in cmd])
        if str(self.venv) in cmd[-1:] or 'venv' in cmd[1:2]:
            (self.venv / 'bin').mkdir(parents=True, exist_ok=True)
            (self.venv / 'bin' / 'python').touch()
        return subprocess.CompletedProcess(cmd, 0, '')

    def pick(self, version):
        rt = runtime.Runtime(self.base(), 'path', '/h/python', version)
        return fixtures.MockPatchObject(runtime, 'pick', return_value=rt)

    def test_uv(self):
        with self.pick((3, 11)):
            python = venv.ensure(self.base())
        self.assertEqual(self.venv / 'bin' / 'python', python)
        self.assertEqual(
            [['/t/uv', 'venv', '-q', '--python', '/h/python',
              str(self.venv)],
             ['/t/uv', 'pip', 'install', '-q', '--no-deps', '-r',
              str(self.lock), '--python', str(python)]], self.commands)
        self.assertTrue((self.venv / venv.STAMP).read_text()
                        .endswith(' host\n'))

    def test_pip(self):
        self.useFixture(fixtures.EnvironmentVariable(
            'NOVA_FORK_INSTALLER', 'pip'))
        with self.pick((3, 11)):
            python = venv.ensure(self.base())
        self.assertEqual(
            [['/h/python', '-m', 'venv', str(self.venv)],
             [str(python), '-m', 'pip', 'install', '-q',
              '--disable-pip-version-check', '--no-deps', '-r',
              str(self.lock)]], self.commands)

    def test_virtualenv_for_python_2_7(self):
        with self.pick((2, 7)):
            venv.ensure(self.base())
        self.assertEqual(['/t/virtualenv', '-q', '-p', '/h/python',
                          str(self.venv)], self.commands[0])
        self.assertEqual(['-m', 'pip', 'install'], self.commands[1][1:4])

    def test_reused_whichever_made_it(self):
        with self.pick((3, 11)):
            venv.ensure(self.base())
            self.useFixture(fixtures.EnvironmentVariable(
                'NOVA_FORK_INSTALLER', 'pip'))
            del self.commands[:]
            venv.ensure(self.base())
            self.assertEqual([], self.commands)
            self.lock.write_text('pip==23.2.1\nsix==2.0\n')
            venv.ensure(self.base())
        self.assertEqual(['/h/python', '-m', 'venv', str(self.venv)],
                         self.commands[0])

    def failing_install(self, output):
        def fail(cmd, **kwargs):
            self.fake_run(cmd, **kwargs)
            if 'install' in cmd:
                return subprocess.CompletedProcess(cmd, 2, output)
            return subprocess.CompletedProcess(cmd, 0, '')
        venv.subprocess.run.side_effect = fail

    def test_a_failed_install_says_what_failed_and_leaves_no_venv(self):
        self.failing_install(
            'error: Failed to fetch: `https://pypi.org/simple/six/`\n'
            '  Caused by: dns error: failed to lookup address\n')
        with self.pick((3, 11)):
            exc = self.assertRaises(errors.ForkError, venv.ensure,
                                    self.base())
        self.assertEqual('installing fake.txt into %s with uv failed: PyPI '
                         'is not reachable (no network?)' % self.venv,
                         str(exc))
        self.assertFalse(self.venv.exists())

    def test_a_failed_pip_install(self):
        self.useFixture(fixtures.EnvironmentVariable(
            'NOVA_FORK_INSTALLER', 'pip'))
        self.failing_install(
            'ERROR: Could not find a version that satisfies the requirement '
            'six==1.0\nERROR: No matching distribution found for six==1.0\n')
        with self.pick((3, 11)):
            exc = self.assertRaises(errors.ForkError, venv.ensure,
                                    self.base())
        self.assertEqual('installing fake.txt into %s failed: ERROR: No '
                         'matching distribution found for six==1.0'
                         % self.venv, str(exc))
        self.assertFalse(self.venv.exists())


class TailTest(testtools.TestCase):

    def test_the_cause_under_pips_generic_lines(self):
        proc = subprocess.CompletedProcess([], 1, stdout=(
            '  error: subprocess-exited-with-error\n'
            '      error in suds-jurko setup command: use_2to3 is invalid.\n'
            'error: metadata-generation-failed\n'
            'hint: See above for details.\n'))
        self.assertEqual(
            'error in suds-jurko setup command: use_2to3 is invalid.',
            venv._tail(proc))
