"""nova-fork releases: is each line on its series' newest final release?"""

from nova_fork import config
from nova_fork.tree import index

HELP = ('compare each line\'s release with the newest final release of its '
        'series on the index (exit 1 when one is newer)')


def add_arguments(parser):
    parser.add_argument('lines', nargs='*', metavar='LINE',
                        help='the lines to compare (default: all)')


def behind(bases, files):
    """[(line, its release, the newest final release of its series)]."""
    rows = []
    for base in bases:
        major = int(base.default_nova.split('.')[0])
        rows.append((base.series, base.default_nova,
                     index.newest_final(files, major)))
    return rows


def releases_cmd(args, root):
    bases = config.load_bases(root)
    chosen = [config.get_base(root, name) for name in args.lines] \
        if args.lines else list(bases.values())
    rows = behind(chosen, index.read())
    newer = [(line, ours, newest) for line, ours, newest in rows
             if newest and newest != ours]
    print('%-9s %-9s %s' % ('line', 'release', 'newest on the index'))
    for line, ours, newest in rows:
        print('%-9s %-9s %s' % (line, ours, newest or 'none'))
    for line, ours, newest in newer:
        print('line %s is on nova %s; the index has %s: set nova and sha256 '
              '(%s) of [%s] in bases.ini, add %s to its releases, then '
              'nova-fork backport %s' % (
                  line, ours, newest, index.read()[newest]['hashes'].get(
                      'sha256', '?'), line, ours, line))
    return 1 if newer else 0
