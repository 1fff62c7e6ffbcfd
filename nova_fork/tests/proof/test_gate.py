import io
from unittest import mock

import testtools

from nova_fork import config
from nova_fork.env import novatox
from nova_fork import errors
from nova_fork.proof import gate
from nova_fork.tests import fakes

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
