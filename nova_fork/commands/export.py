"""nova-fork export LINE: the series as format-patch files in dist/."""

from nova_fork.commands import options
from nova_fork.dist import export

HELP = 'write the series as format-patch files to dist/SERIES/'


def add_arguments(parser):
    options.line_options(parser)


def export_cmd(args, root):
    print(export.export(options.base(args, root)))
    return 0
