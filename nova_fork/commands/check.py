"""nova-fork check VERSION: which units of the fix a release has."""

import json

from nova_fork import check
from nova_fork import config
from nova_fork import located

HELP = ('say which units of the fix a nova release (or the nova code in a '
        'folder, or installed) has and needs, and what serves it; exit 0 '
        'when it has them all, 1 when it needs some')


def add_arguments(parser):
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument('version', nargs='?',
                      help='a release on PyPI, read from its sdist')
    what.add_argument('--path', metavar='DIR',
                      help='the nova code in DIR instead: a source tree, or '
                           'the site-packages (dist-packages) holding nova')
    what.add_argument('--installed', action='store_true',
                      help='the nova code that --python imports instead')
    parser.add_argument('--python', default='python3', metavar='PY',
                        help='with --installed: the interpreter (default: '
                             'python3)')
    parser.add_argument('--json', action='store_true',
                        help='print {"version", "line", "has", "needs"}, '
                             'and "path" for --path and --installed')


def check_cmd(args, root):
    if args.path or args.installed:
        folder = args.path or located.installed(args.python)
        report = check.check_code(root, located.find(folder))
    else:
        report = check.check(root, args.version)
    if args.json:
        print(json.dumps(report.as_json()))
    else:
        print('\n'.join(check.render(report, config.load_bug(root))))
    # 0: has every unit, 1: needs some (errors exit 2 or more)
    return 1 if report.needs else 0
