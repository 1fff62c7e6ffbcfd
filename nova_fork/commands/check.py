"""nova-fork check VERSION: which units of the fix a release has."""

import json

from nova_fork import check
from nova_fork import config

HELP = ('say which units of the fix a nova release has and needs, and which '
        'line serves it; exit 0 when it has them all, 1 when it needs some')


def add_arguments(parser):
    parser.add_argument('version')
    parser.add_argument('--json', action='store_true',
                        help='print {"version", "line", "has", "needs"}')


def check_cmd(args, root):
    report = check.check(root, args.version)
    if args.json:
        print(json.dumps(report.as_json()))
    else:
        print('\n'.join(check.render(report, config.load_bug(root))))
    # 0: has every unit, 1: needs some (errors exit 2 or more)
    return 1 if report.needs else 0
