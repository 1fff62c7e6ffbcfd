"""nova-fork sdist LINE: the fork as a source tarball made by pbr."""

from nova_fork.commands import options
from nova_fork.dist import sdist

HELP = ("write the fork as a source tarball made by pbr's sdist, version "
        'RELEASE.postBUG, to dist/sdist/LINE/ (for kolla-build type = '
        'local)')


def add_arguments(parser):
    options.line_options(parser)
    parser.add_argument('--check', action='store_true',
                        help='also pip install it into a scratch venv over '
                             "the line's venv and run the line's regression "
                             'modules (or the tests after --) against the '
                             'installed nova')
    parser.set_defaults(stestr_args=[])


def sdist_cmd(args, root):
    path, notes = sdist.sdist(options.base(args, root), check=args.check,
                              tests=args.stestr_args)
    for note in notes:
        print(note)
    print(path)
    return 0
