import io
import pathlib
from unittest import mock

import fixtures
import testtools

from nova_fork import cmd
from nova_fork import config
from nova_fork.env import novatox
from nova_fork.env import runtime
from nova_fork.tests import fakes
from nova_fork import toxenvs

LOCK = '# header\nsetuptools==65.5.0\nsix==1.16.0\n'


class EnvironmentTest(testtools.TestCase):

    def test_lock_and_seed(self):
        env = novatox.environment('/p/locks/2024.1.txt', LOCK)
        self.assertEqual(
            [('TOX_CONSTRAINTS_FILE', '/p/locks/2024.1.txt'),
             ('TOX_OVERRIDE',
              'testenv.set_env+=PIP_CONSTRAINT=/p/locks/2024.1.txt;'
              'testenv.set_env+=VIRTUALENV_SETUPTOOLS=65.5.0;'
              'testenv.download=true')], env)

    def test_another_python(self):
        env = dict(novatox.environment(
            '/l.txt', 'six==1\n', 'python3.10', '/py/3.10.13/bin'))
        self.assertEqual('/py/3.10.13/bin:$PATH', env['PATH'])
        # no setuptools in the lock: virtualenv's seed is left alone
        self.assertEqual('testenv.set_env+=PIP_CONSTRAINT=/l.txt;'
                         'testenv.base_python=python3.10;'
                         'tox.ignore_base_python_conflict=true',
                         env['TOX_OVERRIDE'])

    def test_shell_command_can_be_pasted(self):
        env = novatox.environment('/l.txt', LOCK, 'python3.10', '/py/bin')
        self.assertEqual(
            "cd /p/build/2023.1 && PATH=/py/bin:\"$PATH\" "
            "TOX_CONSTRAINTS_FILE=/l.txt TOX_OVERRIDE='testenv.set_env+="
            "PIP_CONSTRAINT=/l.txt;testenv.set_env+="
            "VIRTUALENV_SETUPTOOLS=65.5.0;testenv.download=true;"
            "testenv.base_python=python3.10;"
            "tox.ignore_base_python_conflict=true' tox -e functional -- "
            "'a|b'",
            novatox.shell_command('/p/build/2023.1', env, 'tox',
                                  ['-e', 'functional', '--', 'a|b']))

    def test_process_env_drops_an_outer_tox(self):
        env = novatox.process_env(
            [('PATH', '/py/bin:$PATH'), ('TOX_CONSTRAINTS_FILE', '/l.txt')],
            {'PATH': '/usr/bin', 'TOX_WORK_DIR': '/x/.tox',
             'TOX_ENV_NAME': 'gate-master', 'VIRTUAL_ENV': '/x/.tox/g',
             'HOME': '/root'})
        self.assertEqual({'PATH': '/py/bin:/usr/bin', 'HOME': '/root',
                          'TOX_CONSTRAINTS_FILE': '/l.txt'}, env)

    def test_no_en_us_locale(self):
        env = dict(novatox.environment('/l.txt', '', locale=False))
        self.assertIn('testenv.set_env+=LC_ALL=C.UTF-8', env['TOX_OVERRIDE'])

    def test_pinned(self):
        self.assertEqual('2.1', novatox.pinned('oslo_db==2.1\n', 'oslo.db'))
        self.assertIsNone(novatox.pinned('setuptools>=1\n', 'setuptools'))


class PythonOfTest(testtools.TestCase):

    def base(self, python):
        project = self.useFixture(fakes.FakeProject())
        base = config.get_base(project.root, 'fake')
        return base, runtime.Runtime(base, runtime.PYENV,
                                     '/py/%s/bin/python%s' % (python, python),
                                     tuple(int(n) for n in python.split('.')))

    def test_same_python_as_tox(self):
        base, rt = self.base('%d.%d' % novatox.sys.version_info[:2])
        with mock.patch.object(runtime, 'pick', return_value=rt):
            self.assertEqual((None, None, novatox.sys.version_info[:2]),
                             novatox.python_of(base))

    def test_another_python(self):
        base, rt = self.base('3.1')
        with mock.patch.object(runtime, 'pick', return_value=rt):
            self.assertEqual((base.python, '/py/3.1/bin', (3, 1)),
                             novatox.python_of(base))

    def prepare(self, python, tox_ini):
        """novatox.prepare of a line on python, its tree's tox.ini given."""
        base, rt = self.base(python)
        self.useFixture(fixtures.MockPatchObject(
            runtime, 'pick', return_value=rt))
        tools = []
        self.useFixture(fixtures.MockPatchObject(
            novatox.venv, 'tool',
            side_effect=lambda *a, **k: tools.append((a[1:], k)) or 'tox'))
        tree = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        (tree / 'tox.ini').write_text(tox_ini)
        self.useFixture(fixtures.MockPatchObject(
            novatox.build, 'build', return_value=tree))
        base.lock.parent.mkdir(parents=True, exist_ok=True)
        base.lock.write_text('setuptools==44.1.1\nsix==1.16.0\n')
        return base, novatox.prepare(base), tools

    def test_a_tox3_era_tox_ini_gets_tox3(self):
        # rocky's: whitelist_externals, passenv names on one line, py27
        base, prepared, tools = self.prepare('2.7', ROCKY)
        self.assertEqual([(('tox3',) + novatox.TOX3, {'command': 'tox'})],
                         tools)
        self.assertEqual([('PATH', '/py/2.7/bin:$PATH'),
                          ('TOX_DISCOVER', '/py/2.7/bin/python3'),
                          ('UPPER_CONSTRAINTS_FILE', str(base.lock)),
                          ('PIP_CONSTRAINT', str(base.lock)),
                          ('VIRTUALENV_SETUPTOOLS', '44.1.1'),
                          ('VIRTUALENV_DOWNLOAD', '1')], prepared.env)
        self.assertEqual(('tox 3.28.0', 'py27'),
                         (prepared.tox, prepared.unit_env))
        self.assertEqual(2, len(prepared.tox3))

    def test_python3_with_tox3_tox_ini(self):
        # yoga's: passenv names on one line, TOX_CONSTRAINTS_FILE, py39
        # in its envlist while the line runs on 3.8
        base, prepared, tools = self.prepare('3.8', YOGA)
        self.assertEqual('tox3', tools[0][0][0])
        self.assertEqual(['PATH', 'TOX_DISCOVER', 'TOX_CONSTRAINTS_FILE',
                          'PIP_CONSTRAINT',
                          'VIRTUALENV_SETUPTOOLS', 'VIRTUALENV_DOWNLOAD'],
                         [name for name, _ in prepared.env])
        self.assertEqual('py38', prepared.unit_env)

    def test_tox3_has_what_the_tox_ini_requires(self):
        # ussuri's: tox 3 would provision it, under the lock's constraints
        text = YOGA.replace('[tox]\n', '[tox]\nrequires = virtualenv<20.8\n')
        base, prepared, tools = self.prepare('3.8', text)
        (name, *requirements), kwargs = tools[0]
        self.assertTrue(name.startswith('tox3-'), name)
        self.assertEqual(['tox==3.28.0', 'virtualenv<20.8'], requirements)

    def test_python2_with_a_tox4_tox_ini_gets_tox4(self):
        # what decides is the tox.ini, not the Python
        base, prepared, tools = self.prepare('2.7', ZED)
        self.assertEqual([(('tox',) + novatox.TOX, {})], tools)
        self.assertEqual([], prepared.tox3)
        self.assertEqual('tox 4.67.17', prepared.tox)


ROCKY = """[tox]
envlist = py{27,35},functional,pep8

[testenv]
basepython = python3.5
whitelist_externals =
  bash
install_command = pip install -c{env:UPPER_CONSTRAINTS_FILE:https://x} {opts}
passenv =
  OS_DEBUG GENERATE_HASHES

[testenv:py27]
basepython = python2.7
"""

YOGA = """[tox]
envlist = py39,functional,pep8

[testenv]
allowlist_externals =
  bash
deps =
  -c{env:TOX_CONSTRAINTS_FILE:https://x}
passenv =
  OS_DEBUG GENERATE_HASHES
"""

ZED = YOGA.replace('OS_DEBUG GENERATE_HASHES', 'OS_DEBUG\n  GENERATE_HASHES')


class CommandTest(testtools.TestCase):

    def test_tox_args_after_dashes(self):
        project = self.useFixture(fakes.FakeProject())
        with mock.patch.object(novatox, 'run', return_value=0) as run, \
                mock.patch('sys.stdout', new_callable=io.StringIO):
            code = cmd.main(['tox', 'fake', '--pristine', '--', '-e',
                             'pep8'])
        self.assertEqual(0, code)
        base, args = run.call_args[0]
        self.assertEqual(('fake', ['-e', 'pep8'], True),
                         (base.series, args, run.call_args[1]['pristine']))
        self.assertEqual(pathlib.Path(project.root), base.root)

    def test_gate_env_for_every_line(self):
        project = self.useFixture(fakes.FakeProject())
        envs = toxenvs.envs(project.root, ('--pristine',))
        self.assertEqual([['nova-fork', 'gate', 'fake', '--pristine']],
                         envs['gate-fake'][1])
