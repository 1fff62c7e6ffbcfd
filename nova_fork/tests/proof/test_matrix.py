import time
from unittest import mock

import fixtures
import testtools

from nova_fork import cmd
from nova_fork.proof import matrix
from nova_fork.proof import prove
from nova_fork.tests import fakes


def rows(**columns):
    """{test: {column: (id, outcome, duration)}} from column=[outcome]."""
    result = {}
    for column, outcomes in columns.items():
        for n, outcome in enumerate(outcomes):
            result.setdefault('T.test_%d' % n, {})[column] = (
                'm.T.test_%d' % n, outcome, 1.0)
    return result


class MatrixTest(testtools.TestCase):

    def test_cell(self):
        table = rows(pristine=['FAIL (in use)', 'pass', 'FAIL (devices)'],
                     fork=['pass'] * 3,
                     odd=['ERROR (x)', 'FAIL (devices)', 'pass'])
        self.assertEqual('2 of 3 fail', matrix.cell(table, 'pristine'))
        self.assertEqual('3 pass', matrix.cell(table, 'fork'))
        self.assertEqual('1 of 3 fail, 1 other', matrix.cell(table, 'odd'))
        self.assertEqual('-', matrix.cell(table, 'without x'))

    def runs(self, rows, cached=()):
        """Done prove.Runs of the columns of rows."""
        columns = []
        for cells in rows.values():
            columns += [c for c in cells if c not in columns]
        return [prove.Run(None, column, None, records={
            test_id: {'status': 'x', 'outcome': outcome}
            for test_id, outcome, _ in (
                cells[column] for cells in rows.values()
                if column in cells)},
            cached=column in cached, seconds=60.0) for column in columns]

    def test_line_row(self):
        base = mock.Mock(series='s', nova='1.0')
        table = rows(pristine=['FAIL (in use)', 'pass'],
                     fork=['pass', 'pass'],
                     **{'without b (and c)': ['pass', 'pass']})
        runs = self.runs(table, cached={'pristine', 'fork',
                                        'without b (and c)'})
        with mock.patch.object(prove, 'rows_of', return_value=table), \
                mock.patch.object(prove, 'reproduce_problems',
                                  return_value=[]):
            row, problems = matrix.line_row(base, ['a', 'b'], {'b'}, runs)
        # b left out passes every test: mutants has a problem
        self.assertEqual(['s', '1.0', '1 of 2 fail', '2 pass', '-',
                          '2 pass', '1 problem(s)', 'cached'], row)
        self.assertEqual(1, len(problems))

    def test_matrix_runs_every_line_in_one_pool(self):
        added = []
        pool = mock.MagicMock()
        pool.__enter__.return_value.add.side_effect = added.append
        bases = {'one': mock.Mock(), 'two': mock.Mock()}
        for name, base in bases.items():
            base.for_release.return_value = base
            base.series, base.nova, base.label = name, '1.0', name
        table = rows(pristine=['FAIL (in use)'], fork=['pass'],
                     **{'without a': ['FAIL (in use)']})
        with mock.patch.object(matrix.config, 'load_bases',
                               return_value=bases), \
                mock.patch.object(matrix.config, 'load_units',
                                  return_value={'a': None}), \
                mock.patch.object(matrix.config, 'get_base',
                                  side_effect=lambda r, n: bases[n]), \
                mock.patch.object(prove, 'Pool', return_value=pool), \
                mock.patch.object(prove, 'lacking', return_value={'a'}), \
                mock.patch.object(prove, 'plan', side_effect=lambda b, **k:
                                  self.runs(table)), \
                mock.patch.object(prove, 'rows_of', return_value=table), \
                mock.patch.object(prove, 'reproduce_problems',
                                  return_value=[]):
            result, problems = matrix.matrix('/p')
        self.assertEqual(2, len(added))
        self.assertEqual({}, problems)
        self.assertEqual([['one', '1.0', '1 of 1 fail', '1 pass',
                           '1 of 1 fail', 'ok', 'ran, 3.0 min'],
                          ['two', '1.0', '1 of 1 fail', '1 pass',
                           '1 of 1 fail', 'ok', 'ran, 3.0 min']],
                         result[1:])

    def test_a_column_counts_what_it_ran(self):
        # without b ran the one test b affects
        table = rows(pristine=['FAIL (in use)', 'pass', 'pass'],
                     fork=['pass'] * 3, **{'without b': ['FAIL (in use)']})
        self.assertEqual('1 of 1 fail', matrix.cell(table, 'without b'))
        self.assertEqual('1 of 3 fail', matrix.cell(table, 'pristine'))

    def test_the_row_says_what_came_from_the_cache(self):
        def run(column, cached, seconds=0.0):
            return prove.Run(None, column, None, cached=cached,
                             seconds=seconds)

        self.assertEqual('cached', matrix.results_cell(
            [run('pristine', True), run('fork', True)]))
        self.assertEqual('ran, 4.5 min', matrix.results_cell(
            [run('pristine', False, 150.0), run('fork', False, 120.0)]))
        # the time is that of the runs that ran
        self.assertEqual('2 of 3 cached, 1.5 min', matrix.results_cell(
            [run('pristine', True), run('fork', True),
             run('without a', False, 90.0)]))

    def test_render(self):
        text = matrix.render([matrix.header(['a']),
                              ['s', '1.0', '2 of 3 fail', '3 pass', '-',
                               'ok', 'cached']])
        self.assertIn('s     1.0   2 of 3 fail  3 pass  -', text)

    def table(self):
        return [matrix.header(['a', 'b']),
                ['master', '34.0.0', '9 of 21 fail', '21 pass', '-',
                 '9 of 9 fail', 'ok', 'ran, 3.2 min'],
                ['rocky', '18.3.0', '11 of 13 fail', '13 pass',
                 '11 of 11 fail', '7 of 7 fail', 'ok', 'cached']]

    def test_inc(self):
        text = matrix.inc(self.table(), {}, '2026-12-05', '6eb5c9d8044c',
                          2460.0, 2, 3.14)
        lines = text.splitlines()
        self.assertTrue(lines[0].startswith('.. Written by nova-fork '
                                            'matrix'))
        self.assertIn('Measured on 2026-12-05 at commit ``6eb5c9d8044c`` '
                      'of the project, with ``tox -e matrix``\n'
                      '(``nova-fork matrix``): 41 min on 2 cores, load '
                      'average 3.1.\n', text)
        self.assertIn(matrix.render(self.table()), text)
        self.assertTrue(text.endswith('Both proofs hold on every line.\n'))
        # the same results give the same text: nothing but the date, the
        # commit, the time and the load varies
        self.assertEqual(text, matrix.inc(self.table(), {}, '2026-12-05',
                                          '6eb5c9d8044c', 2460.0, 2, 3.14))

    def test_inc_with_problems(self):
        text = matrix.inc(self.table(), {'rocky': ['T.test_x_: it gave '
                                                   'ERROR (x)']},
                          '2026-12-05', 'abc', 60.0, 1, 0.5)
        self.assertIn('1.0 min on 1 core,', text)
        # a literal block: the problems are not RST
        self.assertIn('Problems (the command exited 7)::\n\n'
                      '    rocky: T.test_x_: it gave ERROR (x)\n', text)

    def test_inc_is_valid_rst(self):
        try:
            from docutils import core
        except ImportError:
            self.skipTest('docutils is not installed')
        text = matrix.inc(self.table(), {'rocky': ['x_ *y']}, '2026-12-05',
                          'abc', 60.0, 2, 1.0)
        html = core.publish_string(text, writer_name='html',
                                   settings_overrides={'halt_level': 2,
                                                       'report_level': 2})
        self.assertIn(b'11 of 11 fail', html)


class CommandTest(testtools.TestCase):
    """nova-fork matrix writes the docs' table when it runs every line."""

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        self.table = [matrix.header(['claim-abort', 'free-instance']),
                      ['fake', '1.0.0', '1 of 1 fail', '1 pass',
                       '1 of 1 fail', '-', 'ok', 'ran, 0.1 min']]
        self.useFixture(fixtures.MockPatchObject(
            matrix, 'matrix', return_value=(self.table, {})))
        self.useFixture(fixtures.MockPatch('sys.stdout'))
        self.useFixture(fixtures.MockPatch('sys.stderr'))
        self.inc = self.project.root / matrix.INC

    def test_every_line_writes_the_table(self):
        self.assertEqual(0, cmd.main(['-q', 'matrix']))
        text = self.inc.read_text()
        self.assertIn(matrix.render(self.table), text)
        self.assertIn('Measured on %s at commit ``unknown' % (
            time.strftime('%Y-%m-%d')), text)
        # naming every line is running every line
        self.inc.unlink()
        self.assertEqual(0, cmd.main(['-q', 'matrix', 'fake']))
        self.assertTrue(self.inc.is_file())

    def test_some_lines_or_another_release_write_nothing(self):
        sha256 = self.project.add_release('1.0.1')
        self.project.append('releases = 1.0.1 %s\n' % sha256)
        self.project.append(fakes.line_section(
            'other', '1.0.0', self.project.sha256, 'patches/fake'))
        self.assertEqual(0, cmd.main(['-q', 'matrix', 'fake']))
        self.assertEqual(0, cmd.main(['-q', 'matrix', 'fake', '--release',
                                      '1.0.1']))
        self.assertFalse(self.inc.exists())

    def test_a_dirty_checkout_writes_no_table(self):
        root = self.project.root
        fakes.git(root, 'init', '-q')
        fakes.git(root, 'add', 'bases.ini')
        fakes.git(root, 'commit', '-qm', 'one')
        (root / 'bases.ini').write_text(
            (root / 'bases.ini').read_text() + '# edited\n')
        self.assertEqual(2, cmd.main(['-q', 'matrix']))
        self.assertFalse(self.inc.exists())
        fakes.git(root, 'commit', '-qam', 'two')
        self.assertEqual(0, cmd.main(['-q', 'matrix']))
        self.assertIn('at commit ``%s``' % fakes.git(
            root, 'rev-parse', '--short=12', 'HEAD').strip(),
            self.inc.read_text())

    def test_problems_are_written_too(self):
        matrix.matrix.return_value = (self.table, {'fake': ['T.test_a: x']})
        self.assertEqual(7, cmd.main(['-q', 'matrix']))
        self.assertIn('    fake: T.test_a: x', self.inc.read_text())
