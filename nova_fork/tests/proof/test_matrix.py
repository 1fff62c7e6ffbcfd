from unittest import mock

import testtools

from nova_fork.proof import matrix
from nova_fork.proof import prove


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

    def test_line_row(self):
        base = mock.Mock(series='s', nova='1.0')
        table = rows(pristine=['FAIL (in use)', 'pass'],
                     fork=['pass', 'pass'],
                     **{'without b (and c)': ['pass', 'pass']})
        columns = ['pristine', 'fork', 'without b (and c)']
        with mock.patch.object(prove, 'lacking', return_value={'b'}), \
                mock.patch.object(prove, 'table',
                                  return_value=(columns, table)), \
                mock.patch.object(prove, 'reproduce_problems',
                                  return_value=[]):
            row, problems = matrix.line_row(base, ['a', 'b'])
        # b left out passes every test: mutants has a problem
        self.assertEqual(['s', '1.0', '1 of 2 fail', '2 pass', '-',
                          '2 pass', '1 problem(s)'], row)
        self.assertEqual(1, len(problems))

    def test_render(self):
        text = matrix.render([matrix.header(['a']),
                              ['s', '1.0', '2 of 3 fail', '3 pass', '-',
                               'ok']])
        self.assertIn('s     1.0   2 of 3 fail  3 pass  -', text)
