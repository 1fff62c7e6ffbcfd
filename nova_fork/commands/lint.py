"""nova-fork lint [LINE]: flake8 over what the fork adds under nova/."""

from nova_fork.commands import options
from nova_fork import config
from nova_fork.env import runner
from nova_fork import errors
from nova_fork.tree import build

HELP = ("flake8 with nova's configuration and local checks over what the "
        'fork adds under nova/')


def add_arguments(parser):
    options.line_options(parser, release=False)


def lint_cmd(args, root):
    lines = [options.line(args, root)] if args.series else \
        list(config.load_bases(root).values())
    failed = [base.series for base in lines
              if runner.lint(base, build.build(base))]
    if failed:
        raise errors.TestFailure('flake8 found problems in what the fork '
                                 'adds under nova/ on %s (see above)' %
                                 ', '.join(failed))
    return 0
