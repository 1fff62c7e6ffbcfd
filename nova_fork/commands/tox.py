"""nova-fork tox LINE: the tree's own tox.ini, with the line's lock."""

from nova_fork.commands import options
from nova_fork.env import novatox
from nova_fork import errors

HELP = ("run the tree's own tox.ini (arguments after --) with the line's "
        'lock as constraints')


def add_arguments(parser):
    options.line_options(parser, release=False)
    parser.add_argument('--pristine', action='store_true',
                        help='in the pristine release\'s tree')
    parser.set_defaults(stestr_args=[])


def tox_cmd(args, root):
    base = options.line(args, root)
    code = novatox.run(base, args.stestr_args, pristine=args.pristine)
    if code:
        raise errors.TestFailure('tox %s failed in the %s tree (exit %d)' % (
            ' '.join(args.stestr_args), base.series, code))
    return 0
