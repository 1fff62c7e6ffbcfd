"""nova-fork review LINE: the commits for Gerrit, in dist/review/."""

import time

from nova_fork.commands import options
from nova_fork.dist import review
from nova_fork import errors
from nova_fork.proof import commitgate

HELP = ('write the commits marked review, signed off by you, to '
        'dist/review/LINE/ for git am and git review, once each commit '
        'passed alone (flake8, its unit tests, the reproducer)')


def add_arguments(parser):
    options.line_options(parser, release=False)
    parser.add_argument('--bug', metavar='N',
                        help='the Launchpad bug of the move path: the fix '
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


def review_cmd(args, root):
    base = options.line(args, root)
    result = review.review(base, bug=args.bug, onto=args.onto,
                           gate=not args.no_gate, nick_=args.nick)
    for note in result.notes:
        print(note)
    if result.gate:
        print('each commit alone, as Zuul gates it (nova %s, %s):' % (
            base.nova, time.strftime('%Y-%m-%d')))
        print(commitgate.render(result.gate))
    failed = commitgate.failed(result.gate)
    if failed:
        raise errors.TestFailure(
            'review %s: %s failed; nothing written (fix the commit in '
            'build/%s, nova-fork refresh %s, run again)' % (
                base.series, ', '.join('commit %d %s' % f for f in failed),
                base.series, base.series))
    print(result.dest)
    return 0
