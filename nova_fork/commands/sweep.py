"""nova-fork sweep: does each line's series apply to every release?"""

import time

from nova_fork.dist import sweep
from nova_fork import errors
from nova_fork import generated
from nova_fork import progress
from nova_fork.proof import matrix

HELP = ('export the series of every final release from %s to %s (or '
        'those between --first and --last) and print a table; run on all '
        'of them, it writes doc/source/generated/sweep.inc' % (
            sweep.FIRST, sweep.LAST))


def add_arguments(parser):
    parser.add_argument('--first', default=sweep.FIRST, metavar='VERSION')
    parser.add_argument('--last', default=sweep.LAST, metavar='VERSION')
    parser.add_argument('--reproduce', action='store_true',
                        help='and show the bug on the release of each line '
                             'furthest from its own (the oldest its series '
                             'applies to)')


def sweep_cmd(args, root):
    every = (args.first, args.last) == (sweep.FIRST, sweep.LAST)
    if every:
        # its runs are not cached: refused before they start
        generated.refuse_dirty(root, sweep.INC)
    start = time.monotonic()
    rows = sweep.sweep(root, args.first, args.last, args.reproduce)
    if not rows:
        raise errors.UsageError('no final release of a line between %s and '
                                '%s on the index' % (args.first, args.last))
    seconds = time.monotonic() - start
    print(matrix.render(sweep.table(rows)))
    print('sweep: %s' % sweep.summary(rows))
    if every:
        path = generated.write(root, sweep.inc(
            rows, time.strftime('%Y-%m-%d'),
            generated.refuse_dirty(root, sweep.INC), seconds), sweep.INC)
        print('sweep: wrote %s' % progress.where(path, root))
    return 0 if all(r.applies and r.reproduce in (sweep.OK, sweep.NONE)
                    for r in rows) else 1
