"""nova-fork debian SUITE: a quilt series for Debian's own nova package."""

from nova_fork.debian import series
from nova_fork.env import chroot

HELP = ("a quilt series for Debian's own nova package of a suite "
        "(dist/debian/SUITE), checked after Debian's patches and on the "
        "suite's Python stack")


def add_arguments(parser):
    parser.add_argument('suite', choices=sorted(chroot.SUITES),
                        help='the Debian suite; its nova picks the line')
    parser.add_argument('--no-tests', action='store_true',
                        help='write and check the series (quilt, '
                             "dpkg-source) but leave out the tests in the "
                             "suite's root")
    parser.add_argument('--root-only', action='store_true',
                        help="only make (or reuse) the suite's Debian root "
                             "with Debian's Python stack for nova's tests; "
                             'print its path')


def debian_cmd(args, root):
    if args.root_only:
        print(series.prepare(root, args.suite))
        return 0
    series.make(root, args.suite, tests=not args.no_tests)
    return 0
