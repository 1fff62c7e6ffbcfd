"""nova-fork matrix [LINE ...]: reproduce and mutants of every line."""

import time

from nova_fork import errors
from nova_fork.proof import matrix

HELP = ('reproduce and mutants for every line (or those named), as one '
        'table: a row a line')


def add_arguments(parser):
    parser.add_argument('lines', nargs='*', metavar='line')
    parser.add_argument('--release', metavar='VERSION',
                        help='another release of the (one) line named')


def matrix_cmd(args, root):
    if args.release and len(args.lines) != 1:
        raise errors.UsageError('--release takes one line, not %s' % (
            ', '.join(args.lines) or 'all of them'))
    table, problems = matrix.matrix(root, args.lines or None, args.release)
    print(matrix.render(table))
    for label, found in problems.items():
        for problem in found:
            print('problem: %s: %s' % (label, problem))
    if problems:
        raise errors.TestFailure('matrix: %d line(s) with problems, see '
                                 'above' % len(problems))
    print('matrix: ok, %s' % time.strftime('%Y-%m-%d'))
    return 0
