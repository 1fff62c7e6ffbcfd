"""nova-fork gate LINE | --all | --table: nova's gate through tox.ini."""

import os
import time

from nova_fork.commands import options
from nova_fork import config
from nova_fork import errors
from nova_fork import generated
from nova_fork import progress
from nova_fork.proof import gate
from nova_fork.proof import gatetable

HELP = ("nova's gate through the tree's tox.ini: pep8 (flake8 with "
        'hacking), the unit and functional suites (failures run again on '
        'the pristine release), releasenotes; cached by tree; writes '
        'doc/source/generated/gate.inc')


def add_arguments(parser):
    options.line_options(parser, release=False)
    parser.add_argument('--all', action='store_true',
                        help='every line of bases.ini, in turn (the lines '
                             'whose results are cached cost nothing)')
    parser.add_argument('--table', action='store_true',
                        help='run nothing: write %s from the cache' %
                             gatetable.INC.as_posix())
    parser.add_argument('--pristine', action='store_true',
                        help="on the pristine release's tree")
    parser.add_argument('--only', metavar='STEPS',
                        help='comma-separated steps of %s' %
                             ','.join(gate.STEPS))
    parser.add_argument('--select', metavar='STEP=TESTS', action='append',
                        help='a test selection (stestr filters) for unit '
                             'or functional; may be repeated')


def _lines(args, root):
    """The lines to run, in bases.ini's order."""
    if args.table:
        if args.series or args.all:
            raise errors.UsageError('--table runs no line: give no line '
                                    'and no --all')
        return []
    if args.all:
        if args.series:
            raise errors.UsageError('--all runs every line: give no line '
                                    'too')
        return list(config.load_bases(root))
    if not args.series:
        raise errors.UsageError('name a line (%s), or give --all or --table'
                                % ', '.join(config.load_bases(root)))
    return [options.line(args, root).series]


def _table(root):
    path = gatetable.write(root, config.load_bases(root),
                           os.cpu_count() or 1)
    print('gate: wrote %s' % progress.where(path, root))


def gate_cmd(args, root):
    lines = _lines(args, root)
    if args.table:
        _table(root)
        return 0
    steps = gate.parse_only(args.only)
    selections = gate.parse_selections(args.select)
    # the whole suites of the forks are the docs' table's rows: they run
    # from a checkout whose commit their records can name
    rows = not args.pristine and not selections
    commit = generated.refuse_dirty(
        root, gatetable.INC, ', or narrow the run (--select, --pristine)',
        'not running the whole suites of %s (rows of %s)' % (
            'every line' if args.all else lines[0],
            gatetable.INC.as_posix())) if rows else None
    start = time.monotonic()
    failed, broken = [], []
    for line in lines:
        base = config.get_base(root, line)
        try:
            done = gate.gate(base, steps, selections, args.pristine, commit)
        except errors.ForkError as exc:
            if not args.all:
                raise
            # one line that cannot run does not stop the others
            print('gate %s: %s' % (line, exc), flush=True)
            broken.append(line)
            continue
        print('gate %s (nova %s%s), %s:' % (
            line, base.nova, ', pristine' if args.pristine else '',
            time.strftime('%Y-%m-%d')))
        print(gate.render([gate.row(r, cached) for r, cached in done]))
        if any(gate.failed(r) for r, _ in done):
            failed.append('%s (%s)' % (line, ', '.join(
                r['step'] for r, _ in done if gate.failed(r))))
    if rows:
        _table(root)
    seconds = time.monotonic() - start
    if broken or failed:
        raise errors.TestFailure('gate: %s%s%s, %s' % (
            '; '.join(failed) + (' failed' if failed else ''),
            '; ' if failed and broken else '',
            'could not run %s' % ', '.join(broken) if broken else '',
            gate.duration(seconds)))
    print('gate %s: ok, %s' % (', '.join(lines) if not args.all else
                               'every line', gate.duration(seconds)))
    return 0
