"""nova-fork review LINE: the commits for Gerrit, in dist/review/."""

from nova_fork.commands import options
from nova_fork.dist import review

HELP = ('write the commits marked review, signed off by you, to '
        'dist/review/LINE/ for git am and git review')


def add_arguments(parser):
    options.line_options(parser, release=False)
    parser.add_argument('--bug', metavar='N',
                        help='the Launchpad bug of the move path: fixes '
                             'close it, the other commits are related to it')
    parser.add_argument('--onto', metavar='GITDIR[@REF]',
                        help='also check that the series applies onto REF '
                             '(default HEAD) of this nova clone or mirror')


def review_cmd(args, root):
    result = review.review(options.line(args, root), bug=args.bug,
                           onto=args.onto)
    for note in result.notes:
        print(note)
    print(result.dest)
    return 0
