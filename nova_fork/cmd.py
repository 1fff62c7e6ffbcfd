"""nova-fork: build, test and export the patched Nova fork.

The commands live in nova_fork/commands/, one module each; this module
wires them into argparse and turns the tool's errors into exit codes.
"""

import argparse
import sys

from nova_fork.commands import backport
from nova_fork.commands import build
from nova_fork.commands import check
from nova_fork.commands import debian
from nova_fork.commands import export
from nova_fork.commands import follow
from nova_fork.commands import gate
from nova_fork.commands import libvirt
from nova_fork.commands import lines
from nova_fork.commands import lint
from nova_fork.commands import lock
from nova_fork.commands import matrix
from nova_fork.commands import mutants
from nova_fork.commands import refresh
from nova_fork.commands import releases
from nova_fork.commands import reproduce
from nova_fork.commands import review
from nova_fork.commands import sdist
from nova_fork.commands import sweep
from nova_fork.commands import test
from nova_fork.commands import tox
from nova_fork.commands import venv
from nova_fork.commands import zuul
from nova_fork import config
from nova_fork.env import children
from nova_fork import errors
from nova_fork import progress

# In the order of --help.  Each module has HELP, add_arguments(parser) and
# NAME_cmd(args, root), NAME being the module's (and the command's) name.
COMMANDS = (build, venv, lock, test, lint, tox, gate, export, sdist, review,
            lines, releases, refresh, backport, follow, check, reproduce,
            mutants, libvirt, debian, matrix, sweep, zuul)


def name_of(command):
    """The command's name: its module's."""
    return command.__name__.rpartition('.')[2]


QUIET = 'no line on stderr for each step (fetch, build, venv, stestr)'


def make_parser():
    parser = argparse.ArgumentParser(
        prog='nova-fork', description=__doc__.split('\n')[0])
    parser.add_argument('-q', '--quiet', action='store_true', help=QUIET)
    sub = parser.add_subparsers(dest='command', metavar='COMMAND')
    sub.required = True
    for command in COMMANDS:
        name = name_of(command)
        p = sub.add_parser(name, help=command.HELP)
        command.add_arguments(p)
        # also after the command; unset there, it leaves nova-fork's
        p.add_argument('-q', '--quiet', action='store_true',
                       default=argparse.SUPPRESS, help=QUIET)
        p.set_defaults(func=getattr(command, '%s_cmd' % name))
    return parser


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    # Everything after "--" is for stestr; argparse's subcommands do not
    # keep "--" apart themselves.
    extra = []
    if '--' in argv:
        extra = argv[argv.index('--') + 1:]
        argv = argv[:argv.index('--')]
    parser = make_parser()
    args = parser.parse_args(argv)
    if extra:
        if not hasattr(args, 'stestr_args'):
            parser.error('only "test", "tox" and "sdist" take arguments '
                         'after --')
        args.stestr_args = extra
    try:
        root = config.find_root()
        # SIGTERM, as Ctrl-C, ends the command and what it started
        with progress.shown(not args.quiet), \
                children.sigterm_stops_children():
            return args.func(args, root)
    except errors.ForkError as exc:
        print('nova-fork: error: %s' % exc, file=sys.stderr)
        return exc.exit_code
    except children.Terminated:
        print('nova-fork: terminated (SIGTERM)', file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print('nova-fork: interrupted', file=sys.stderr)
        return 130


if __name__ == '__main__':
    sys.exit(main())
