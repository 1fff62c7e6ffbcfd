"""nova-fork lines: the lines of bases.ini, one a line, for scripts."""

from nova_fork import config
from nova_fork.env import runtime

HELP = 'list the lines of bases.ini, one a line'


def add_arguments(parser):
    parser.add_argument('--with-root', action='store_true',
                        help='only the lines whose runtime names a Debian '
                             'root')
    parser.add_argument('--ci', choices=config.CI_STEPS,
                        help='only the lines whose ci option in bases.ini '
                             'has this step of .ci/run')


def lines_cmd(args, root):
    """The lines of bases.ini, one a line, for scripts (.ci/run)."""
    for base in config.load_bases(root).values():
        if args.with_root and not any(
                word.startswith(runtime.DEBIAN) for word in base.runtime):
            continue
        if args.ci and args.ci not in base.ci:
            continue
        print(base.series)
    return 0
