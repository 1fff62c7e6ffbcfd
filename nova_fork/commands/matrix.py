"""nova-fork matrix [LINE ...]: reproduce and mutants of every line."""

import os
import time

from nova_fork import config
from nova_fork import errors
from nova_fork import generated
from nova_fork import progress
from nova_fork.proof import matrix

HELP = ('reproduce and mutants for every line (or those named), as one '
        'table: a row a line; run on every line, it writes the table to '
        'doc/source/generated/matrix.inc')


def add_arguments(parser):
    parser.add_argument('lines', nargs='*', metavar='line')
    parser.add_argument('--release', metavar='VERSION',
                        help='another release of the (one) line named')


def matrix_cmd(args, root):
    if args.release and len(args.lines) != 1:
        raise errors.UsageError('--release takes one line, not %s' % (
            ', '.join(args.lines) or 'all of them'))
    start = time.monotonic()
    # the table of the docs is of every line, on its own release
    every = not args.release and (
        not args.lines or list(args.lines) == list(config.load_bases(root)))
    table, problems = matrix.matrix(root, args.lines or None, args.release)
    seconds = time.monotonic() - start
    date = time.strftime('%Y-%m-%d')
    print(matrix.render(table))
    for label, found in problems.items():
        for problem in found:
            print('problem: %s: %s' % (label, problem))
    if every:
        # the runs are cached: once the changes are committed, the same
        # command writes the table at once
        commit = generated.refuse_dirty(
            root, matrix.INC, ', then run nova-fork matrix again (its runs '
            'are cached)')
        path = generated.write(root, matrix.inc(
            table, problems, date, commit, seconds,
            os.cpu_count() or 1, os.getloadavg()[2]), matrix.INC)
        print('matrix: wrote %s' % progress.where(path, root))
    if problems:
        raise errors.TestFailure('matrix: %d line(s) with problems, see '
                                 'above' % len(problems))
    print('matrix: ok, %s, %s' % (date, matrix.minutes(seconds)))
    return 0
