"""nova-fork follow LINE: the edits of the line above, into its backports."""

from nova_fork.commands import options
from nova_fork.tree import follow

HELP = ('carry what the line above changed since a revision (default: '
        "what is not committed) into the line's backports, keeping what "
        'they changed to fit its release')


def add_arguments(parser):
    options.line_options(parser, release=False)
    parser.add_argument('--since', metavar='REV', default='HEAD',
                        help='the project revision whose patches of the '
                             'line above the edits are measured from '
                             '(default HEAD)')


def follow_cmd(args, root):
    base = options.line(args, root)
    notes, paths = follow.follow(base, since=args.since)
    for note in notes:
        print(note)
    for path in paths:
        print(path)
    return 0
