import io

import fixtures
import testtools

from nova_fork import cmd
from nova_fork import errors
from nova_fork.proof import gate
from nova_fork.proof import gatetable
from nova_fork.proof import prove
from nova_fork.tests import fakes


def record(line='rocky', step='unit', finished=1.0, **values):
    """A record of a whole suite on a fork, as gate.run_step makes it."""
    result = {'line': line, 'release': '18.3.0', 'pristine': False,
              'step': step, 'env': 'py27' if step == 'unit' else step,
              'selection': None, 'ids': None, 'exit': 0,
              'tests': {'run': 3, 'passed': 3, 'failed': 0, 'skipped': 0},
              'failed': [], 'seconds': 125.0, 'load': 2.25,
              'date': '2026-12-07', 'finished': finished,
              'commit': 'f98fbfa0c0ff'}
    result.update(values)
    return result


FAILED = {'exit': 1, 'failed': ['u.T.test_a', 'u.T.test_b'],
          'tests': {'run': 3, 'passed': 1, 'failed': 2, 'skipped': 0},
          'shared': ['u.T.test_a'], 'ours': ['u.T.test_b']}


class TableTest(testtools.TestCase):

    def test_latest(self):
        found = [record(finished=1.0), record(finished=3.0, seconds=1.0),
                 record(finished=9.0, pristine=True),
                 record(finished=9.0, selection='test_claims'),
                 record(finished=9.0, ids=['a']),
                 record(finished=9.0, release='18.2.2'),
                 record(finished=9.0, step='pep8'),
                 record(step='functional', finished=2.0),
                 record(line='gone', finished=9.0)]
        rows = gatetable.latest(found, {'rocky': '18.3.0'})
        self.assertEqual([('rocky', 'functional'), ('rocky', 'unit')],
                         sorted(rows))
        self.assertEqual(3.0, rows['rocky', 'unit']['finished'])

    def test_table(self):
        rows = {('rocky', 'unit'): record(**FAILED),
                ('rocky', 'functional'): record(step='functional')}
        table, failures = gatetable.table(
            [('master', '34.0.0'), ('rocky', '18.3.0')], rows)
        self.assertEqual(gatetable.HEADER, table[0])
        self.assertEqual(['master', '34.0.0', 'unit', 'not run'],
                         table[1][:4])
        self.assertEqual(['rocky', '18.3.0', 'unit (py27)', '3', '1', '2',
                          '0', '1', '1', '2 min 05 s', '2.2',
                          '2026-12-07', 'f98fbfa0c0ff'], table[3])
        self.assertEqual(['0', '0'], table[4][7:9])
        self.assertEqual([('rocky', 'unit (py27)', 'shared',
                           ['u.T.test_a']),
                          ('rocky', 'unit (py27)', 'ours', ['u.T.test_b'])],
                         failures)

    def test_not_told_and_no_results(self):
        rows = {('rocky', 'unit'): record(**dict(FAILED, shared=None,
                                                 ours=None)),
                ('rocky', 'functional'): record(
                    step='functional', exit=2, tests={'run': 0},
                    failed=[])}
        table, failures = gatetable.table([('rocky', '18.3.0')], rows)
        self.assertEqual(['?', '?'], table[1][7:9])
        self.assertEqual(['exit 2', '-', '-', '-'], table[2][3:7])
        self.assertEqual([('rocky', 'unit (py27)', 'not told',
                           ['u.T.test_a', 'u.T.test_b'])], failures)

    def test_inc_is_valid_rst(self):
        try:
            from docutils import core
        except ImportError:
            self.skipTest('docutils is not installed')
        many = dict(FAILED, ours=['u.T.test_%d' % n for n in range(30)])
        table, failures = gatetable.table(
            [('master', '34.0.0'), ('rocky', '18.3.0')],
            {('rocky', 'unit'): record(**many)})
        text = gatetable.inc(table, failures, 2)
        self.assertIn('``u.T.test_24`` and 5 more', text)
        self.assertNotIn('test_25', text)
        html = core.publish_string(text, writer_name='html',
                                   settings_overrides={'halt_level': 2,
                                                       'report_level': 2})
        self.assertIn(b'unit (py27)', html)
        self.assertIn(b'not run', html)
        self.assertIn('No test failed', gatetable.inc(table[:4], [], 1))
        self.assertIn('No suite has run yet', gatetable.inc(table[:2], [], 1))


class WriteTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        self.root = self.project.root
        self.inc = self.root / gatetable.INC
        self.useFixture(fixtures.MockPatch('sys.stdout',
                                           new_callable=io.StringIO))
        self.stderr = self.useFixture(fixtures.MockPatch(
            'sys.stderr', new_callable=io.StringIO)).mock

    def commit_all(self):
        fakes.git(self.root, 'init', '-q')
        fakes.git(self.root, 'add', 'bases.ini', 'patches')
        fakes.git(self.root, 'commit', '-qm', 'one')

    def test_written_from_the_cache(self):
        prove.store(gate.cache_dir(self.root) / 'k.json',
                    record(line='fake', release='1.0.0', **FAILED))
        self.assertEqual(0, cmd.main(['-q', 'gate', '--table']))
        text = self.inc.read_text()
        self.assertIn('fake  1.0.0    unit (py27)', text)
        self.assertIn('fake  1.0.0    functional   not run', text)
        self.assertIn('``u.T.test_b``', text)

    def test_a_dirty_checkout_writes_nothing(self):
        self.commit_all()
        (self.root / 'bases.ini').write_text(
            (self.root / 'bases.ini').read_text() + '# edited\n')
        self.assertEqual(2, cmd.main(['-q', 'gate', '--table']))
        self.assertFalse(self.inc.exists())
        self.assertIn('not writing doc/source/generated/gate.inc: the '
                      'checkout has uncommitted changes (bases.ini)',
                      self.stderr.getvalue())
        fakes.git(self.root, 'commit', '-qam', 'two')
        self.assertEqual(0, cmd.main(['-q', 'gate', '--table']))
        self.assertTrue(self.inc.is_file())


class CommandTest(testtools.TestCase):
    """nova-fork gate: one line, --all, and when the table is written."""

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        self.project.append(fakes.line_section(
            'other', '1.0.0', self.project.sha256, 'patches/fake'))
        self.root = self.project.root
        self.inc = self.root / gatetable.INC
        self.ran = []
        self.useFixture(fixtures.MockPatchObject(
            gate, 'gate', side_effect=self.fake_gate))
        self.stdout = self.useFixture(fixtures.MockPatch(
            'sys.stdout', new_callable=io.StringIO)).mock
        self.stderr = self.useFixture(fixtures.MockPatch(
            'sys.stderr', new_callable=io.StringIO)).mock

    def fake_gate(self, base, steps, selections=None, pristine=False,
                  commit=None):
        self.ran.append((base.series, steps, selections, pristine))
        if base.series == 'broken':
            raise errors.PatchError('0001 does not apply')
        return [(record(line=base.series, release=base.nova, step=step,
                        commit=commit), False) for step in steps]

    def test_all_runs_every_line_and_writes_the_table(self):
        self.assertEqual(0, cmd.main(['-q', 'gate', '--all', '--only',
                                      'unit,functional']))
        self.assertEqual([('fake', ['unit', 'functional'], {}, False),
                          ('other', ['unit', 'functional'], {}, False)],
                         self.ran)
        self.assertTrue(self.inc.is_file())
        self.assertIn('gate every line: ok', self.stdout.getvalue())

    def test_all_goes_on_past_a_line_that_cannot_run(self):
        self.project.append(fakes.line_section(
            'broken', '1.0.0', self.project.sha256, 'patches/fake'))
        self.assertEqual(7, cmd.main(['-q', 'gate', '--all']))
        self.assertEqual(['fake', 'other', 'broken'],
                         [line for line, _, _, _ in self.ran])
        self.assertIn('could not run broken', self.stderr.getvalue())

    def test_narrow_runs_write_no_table_and_may_be_dirty(self):
        fakes.git(self.root, 'init', '-q')
        fakes.git(self.root, 'add', 'bases.ini')
        fakes.git(self.root, 'commit', '-qm', 'one')
        (self.root / 'bases.ini').write_text(
            (self.root / 'bases.ini').read_text() + '# edited\n')
        self.assertEqual(0, cmd.main(['-q', 'gate', 'fake', '--select',
                                      'unit=test_claims']))
        self.assertEqual(0, cmd.main(['-q', 'gate', 'fake', '--pristine']))
        self.assertFalse(self.inc.exists())
        # the whole suites of a fork are refused before they run
        del self.ran[:]
        self.assertEqual(2, cmd.main(['-q', 'gate', 'fake']))
        self.assertEqual([], self.ran)
        self.assertIn('uncommitted changes (bases.ini)',
                      self.stderr.getvalue())

    def test_usage(self):
        for argv in (['gate'], ['gate', 'fake', '--all'],
                     ['gate', 'fake', '--table'], ['gate', '--all',
                                                   '--table']):
            self.assertEqual(2, cmd.main(['-q'] + argv), argv)
        self.assertEqual([], self.ran)
