"""nova-fork venv LINE: the line's test venv, from its lock file."""

from nova_fork.commands import options
from nova_fork.env import venv

HELP = 'build or reuse the test venv from the lock file; print its python'


def add_arguments(parser):
    options.line_options(parser, release=False)


def venv_cmd(args, root):
    print(venv.ensure(options.line(args, root)))
    return 0
