"""nova-fork refresh LINE: an edited tree's commits back into patches/."""

from nova_fork.commands import options
from nova_fork.tree import refresh

HELP = ('write the commits of an edited tree back to the patches and files '
        'of its line')


def add_arguments(parser):
    options.line_options(parser)


def refresh_cmd(args, root):
    changed = refresh.refresh(options.base(args, root))
    for path in changed:
        print(path)
    if not changed:
        print('nothing to refresh: the project already has what the tree '
              'holds')
    return 0
