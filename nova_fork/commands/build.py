"""nova-fork build LINE: fetch, verify and materialize a tree."""

from nova_fork.commands import options
from nova_fork.tree import build

HELP = 'fetch, verify and materialize a tree; print its path'


def add_arguments(parser):
    options.line_options(parser)
    options.variant_options(parser)


def build_cmd(args, root):
    base = options.base(args, root)
    print(build.build(base, pristine=args.pristine, without=args.without))
    return 0
