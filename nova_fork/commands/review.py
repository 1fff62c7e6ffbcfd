"""nova-fork review LINE: the commits for Gerrit, in dist/review/."""

import time

from nova_fork.commands import options
from nova_fork import config
from nova_fork.dist import review
from nova_fork import errors
from nova_fork import generated
from nova_fork.proof import commitgate

HELP = ('write the commits of a change marked review, signed off by you, '
        'to dist/review/LINE/ for git am and git review, once each commit '
        'passed alone (flake8, its unit tests, the reproducer)')


def add_arguments(parser):
    options.line_options(parser, release=False)
    parser.add_argument('--change', metavar='CHANGE',
                        default=config.DEFAULT_CHANGE,
                        help='the change of the series: its entries say '
                             'review=CHANGE (default: %s, the entries that '
                             'say review)' % config.DEFAULT_CHANGE)
    parser.add_argument('--bug', metavar='N',
                        help='the Launchpad bug of the change: the fix '
                             'that completes it closes it, the fixes '
                             'before it are partial, the other commits are '
                             'related to it; the reproducer and the release '
                             'note are named after it')
    parser.add_argument('--onto', metavar='GITDIR[@REF]',
                        help='also check that the series applies onto REF '
                             '(default HEAD) of this nova clone or mirror')
    parser.add_argument('--nick', metavar='NICK',
                        help='your IRC nick, the owner of the FIXME and '
                             'NOTE comments of the series (default: git '
                             'config nova-fork.nick, or gitreview.username)')
    parser.add_argument('--no-gate', action='store_true',
                        help='do not check each commit alone (flake8, the '
                             'unit tests of the modules it touches, the '
                             'reproducer)')
    parser.add_argument('--record', action='store_true',
                        help='write what was checked, and the table, to '
                             'doc/source/generated/review-LABEL.inc (from '
                             'a committed checkout)')


def fragment_path(series, change):
    return generated.FOLDER / ('review-%s.inc' % review.label(series, change))


def fragment(base, change, result, argv, commit):
    """The docs' account of a review run, as RST."""
    lines = [
        'Measured on %s at commit %s of the project, with ``%s``:' % (
            time.strftime('%Y-%m-%d'), commit, ' '.join(argv)), '']
    lines += ['* %s' % note for note in result.notes]
    lines += ['', commitgate.render(result.gate, result.added), '']
    return '\n'.join(lines)


def review_cmd(args, root):
    base = options.line(args, root)
    inc = fragment_path(base.series, args.change)
    commit = None
    if args.record:
        if args.no_gate:
            raise errors.UsageError(
                '--record writes the table of each commit alone: leave out '
                '--no-gate')
        commit = generated.refuse_dirty(root, inc)
    result = review.review(base, bug=args.bug, onto=args.onto,
                           gate=not args.no_gate, nick_=args.nick,
                           change=args.change)
    for note in result.notes:
        print(note)
    if result.gate:
        print('each commit alone, as Zuul gates it (nova %s, %s):' % (
            base.nova, time.strftime('%Y-%m-%d')))
        print(commitgate.render(result.gate, result.added))
    failed = commitgate.failed(result.gate)
    if failed:
        raise errors.TestFailure(
            'review %s: %s failed; nothing written (fix the commit in '
            'build/%s, nova-fork refresh %s, run again)' % (
                base.series, ', '.join('commit %d %s' % f for f in failed),
                base.series, base.series))
    if args.record:
        argv = ['nova-fork', 'review', base.series]
        if args.change != config.DEFAULT_CHANGE:
            argv += ['--change', args.change]
        if args.bug:
            argv += ['--bug', args.bug]
        if args.onto:
            argv += ['--onto', args.onto]
        print(generated.write(root, fragment(base, args.change, result, argv,
                                             commit), inc))
    print(result.dest)
    return 0
