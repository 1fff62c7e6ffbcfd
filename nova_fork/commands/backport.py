"""nova-fork backport LINE: the line's commits as cherry-picks."""

from nova_fork.commands import options
from nova_fork.tree import backport

HELP = ("cherry-pick the commits of the line it backports onto the line's "
        'release, and write them back as its patches')


def add_arguments(parser):
    options.line_options(parser)


def backport_cmd(args, root):
    base = options.base(args, root)
    for path in backport.backport(base):
        print(path)
    return 0
