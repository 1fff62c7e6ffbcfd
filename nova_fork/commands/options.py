"""Arguments that several commands share, and the line they name."""

from nova_fork import config
from nova_fork import errors
from nova_fork.tree import pins


def line_options(parser, release=True):
    """The LINE argument, and --release for another release of it."""
    parser.add_argument('series', nargs='?', metavar='line',
                        help='a line of bases.ini (nova-fork lines)')
    if release:
        parser.add_argument('--release', metavar='VERSION',
                            help='another final release of the line\'s '
                                 'series (pinned in SHA256SUMS)')


def variant_options(parser):
    group = parser.add_mutually_exclusive_group()
    group.add_argument('--pristine', action='store_true',
                       help='the upstream release with only our new test '
                            'files, none of the fixes')
    group.add_argument('--without', metavar='UNIT',
                       help='leave the commit of a unit of the fix out '
                            '(and those that build on it)')


def line(args, root):
    """The line the command names; a usage error naming them if none."""
    if not args.series:
        raise errors.UsageError(
            'name a line: %s (bases.ini)' % ', '.join(
                config.load_bases(root)))
    return config.get_base(root, args.series)


def base(args, root):
    """The line the command names, for its --release if given."""
    return pins.on_release(line(args, root), getattr(args, 'release', None))
