import io
import pathlib
from unittest import mock

import testtools

from nova_fork import cmd
from nova_fork import config
from nova_fork.env import novatox
from nova_fork.env import runtime
from nova_fork import errors
from nova_fork.proof import gate
from nova_fork.tests import fakes
from nova_fork import toxenvs

LOCK = '# header\nsetuptools==65.5.0\nsix==1.16.0\n'

TOTALS = '''
======
Totals
======
Ran: %d tests in 1.0 sec.
 - Passed: %d
 - Skipped: %d
 - Expected Fail: 0
 - Unexpected Success: 0
 - Failed: %d
Sum of execute time for each test: 1.0 sec.
'''


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
            self.assertEqual((None, None), novatox.python_of(base))

    def test_another_python(self):
        base, rt = self.base('3.1')
        with mock.patch.object(runtime, 'pick', return_value=rt):
            self.assertEqual((base.python, '/py/3.1/bin'),
                             novatox.python_of(base))

    def test_python2_is_refused(self):
        base, rt = self.base('2.7')
        with mock.patch.object(runtime, 'pick', return_value=rt):
            exc = self.assertRaises(errors.UsageError, novatox.python_of,
                                    base)
        self.assertIn('nova-fork test fake', str(exc))


class GateTest(testtools.TestCase):

    def test_counts_sum_the_runs(self):
        # nova's py3: the suite, then the profiler test combined into it
        out = 'x\n' + TOTALS % (12, 10, 1, 1) + TOTALS % (1, 1, 0, 0)
        self.assertEqual({'passed': 11, 'failed': 1, 'skipped': 1},
                         gate.counts(out))
        self.assertIsNone(gate.counts('ImportError: no module named x\n'))

    def test_rows(self):
        out = TOTALS % (3, 3, 0, 0)
        self.assertEqual(
            ['py3', 'py3 (selection)', 'ok', '3', '0', '0', '1 min 05 s'],
            gate.row('py3', 0, out, 65.2, 'test_claims'))
        self.assertEqual(
            ['pep8', 'fast8', 'FAILED (exit 1)', '-', '3', '-', '9 s'],
            gate.row('pep8', 1, './nova/a.py:1:1: H306 imports\n'
                     'nova/b.py:2:80: E501 line too long\n'
                     './nova/c.py:3:1: N375: Mocking\n', 9))
        self.assertEqual(
            ['releasenotes', 'releasenotes', 'ok', '-', '-', '-', '30 s'],
            gate.row('releasenotes', 0, 'build succeeded.\n', 30))

    def test_render(self):
        text = gate.render([['py3', 'py3', 'ok', '3', '0', '0', '5 s']])
        self.assertEqual(
            ['step  tox env  result  passed  failed  skipped  time',
             '----  -------  ------  ------  ------  -------  ----',
             'py3   py3      ok      3       0       0        5 s'],
            text.splitlines())

    def test_options(self):
        self.assertEqual(['pep8', 'releasenotes'],
                         gate.parse_only('releasenotes,pep8'))
        self.assertEqual(list(gate.STEPS), gate.parse_only(None))
        self.assertRaises(errors.UsageError, gate.parse_only, 'docs')
        self.assertEqual({'py3': 'a b'}, gate.parse_selections(['py3=a b']))
        self.assertRaises(errors.UsageError, gate.parse_selections, ['py3'])
        self.assertRaises(errors.UsageError, gate.tox_args, 'pep8', 'x')
        self.assertEqual(['-e', 'py3', '--', 'a', 'b'],
                         gate.tox_args('py3', 'a b'))

    def test_gate_runs_every_step_and_fails(self):
        project = self.useFixture(fakes.FakeProject())
        base = config.get_base(project.root, 'fake')
        results = {'fast8': (0, ''), 'py3': (1, TOTALS % (2, 1, 0, 1)),
                   'functional': (0, TOTALS % (4, 4, 0, 0)),
                   'releasenotes': (0, '')}

        def run(base, args, prepared=None, capture=False):
            return results[args[1]]

        with mock.patch.object(novatox, 'prepare',
                               return_value=('t', [], 'tox')), \
                mock.patch.object(novatox, 'run', side_effect=run), \
                mock.patch('sys.stdout', new_callable=io.StringIO):
            rows, failed = gate.gate(base, list(gate.STEPS))
        self.assertEqual(['py3'], failed)
        self.assertEqual([['pep8', 'ok'], ['py3', 'FAILED (exit 1)'],
                          ['functional', 'ok'], ['releasenotes', 'ok']],
                         [r[:1] + r[2:3] for r in rows])
        self.assertEqual(['1', '1', '0'], rows[1][3:6])


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
