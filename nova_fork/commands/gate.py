"""nova-fork gate LINE: nova's gate through the tree's tox.ini."""

import time

from nova_fork.commands import options
from nova_fork import errors
from nova_fork.proof import gate

HELP = ("nova's gate through the tree's tox.ini: pep8 (flake8 with "
        'hacking), py3, functional, releasenotes; a table of counts and '
        'times')


def add_arguments(parser):
    options.line_options(parser, release=False)
    parser.add_argument('--pristine', action='store_true',
                        help="on the pristine release's tree")
    parser.add_argument('--only', metavar='STEPS',
                        help='comma-separated steps of %s' %
                             ','.join(gate.STEPS))
    parser.add_argument('--select', metavar='STEP=TESTS', action='append',
                        help='a test selection (stestr filters) for py3 or '
                             'functional; may be repeated')


def gate_cmd(args, root):
    base = options.line(args, root)
    steps = gate.parse_only(args.only)
    selections = gate.parse_selections(args.select)
    start = time.monotonic()
    rows, failed = gate.gate(base, steps, selections, args.pristine)
    print('gate %s (nova %s%s), %s, %s:' % (
        base.series, base.nova, ', pristine' if args.pristine else '',
        time.strftime('%Y-%m-%d'), gate._duration(time.monotonic() - start)))
    print(gate.render(rows))
    if failed:
        raise errors.TestFailure('gate %s: %s failed (see above)' % (
            base.series, ', '.join(failed)))
    print('gate %s: ok' % base.series)
    return 0
