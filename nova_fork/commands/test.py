"""nova-fork test LINE: stestr in a tree with the line's venv."""

from nova_fork.commands import options
from nova_fork.env import runner
from nova_fork import errors
from nova_fork.tree import build

HELP = 'run stestr in a tree with its venv'


def add_arguments(parser):
    options.line_options(parser)
    options.variant_options(parser)
    parser.add_argument('--path', choices=sorted(runner.PATHS),
                        default='functional',
                        help='the test path stestr discovers (default: '
                             'functional)')
    parser.add_argument('--regression', action='store_true',
                        help="only the line's regression modules "
                             '(bases.ini)')
    parser.set_defaults(stestr_args=[])


def test_cmd(args, root):
    base = options.base(args, root)
    tree = build.build(base, pristine=args.pristine, without=args.without)
    stestr_args = args.stestr_args
    if args.regression:
        stestr_args = ['run'] + list(base.regression) + list(stestr_args)
    code = runner.run(base, tree, stestr_args, path=args.path)
    if code:
        raise errors.TestFailure(
            'tests failed in %s (exit %d); "nova-fork test %s -- last" '
            'shows the run again' % (tree, code, args.series))
    return 0
