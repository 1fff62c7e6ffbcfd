"""nova-fork lock LINE: resolve the test dependencies into the lock file."""

from nova_fork.commands import options
from nova_fork.env import venv

HELP = 'resolve the test dependencies and write the lock file'


def add_arguments(parser):
    options.line_options(parser, release=False)
    parser.add_argument('--constraints', metavar='FILE',
                        help="upstream's upper-constraints for the series; "
                             'without it, the newest releases on PyPI (for '
                             'a series upstream has not published them for '
                             'yet)')


def lock_cmd(args, root):
    base = options.line(args, root)
    print(venv.lock(base, args.constraints))
    return 0
