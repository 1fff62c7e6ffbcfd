"""nova-fork libvirt [LINE]: real libvirt as the referee of the fakes."""

from nova_fork.commands import options
from nova_fork import config
from nova_fork import errors
from nova_fork.proof import capture
from nova_fork.proof import prove
from nova_fork.proof import referee
from nova_fork.tree import build

HELP = ("hand the PCI hostdevs of the regression tests' guests to real "
        'libvirt (its test driver): it refuses those of the pristine '
        'release that repeat a device, and takes every guest of the fork '
        '(default line: master)')


def add_arguments(parser):
    options.line_options(parser)


def must_repeat(base):
    """The tests where the pristine release repeats a device, a regex."""
    units = config.load_units(base.root)
    return '|'.join('(?:%s)' % units[name].repeats
                    for name in sorted(prove.lacking(base))
                    if units[name].repeats)


def libvirt_cmd(args, root):
    if not args.series:
        args.series = next(iter(config.load_bases(root)))
    base = options.base(args, root)
    conn, error = referee.connect()
    rows, problems, notes = [], [], []
    for run, kwargs, must in (('pristine', {'pristine': True},
                               must_repeat(base)),
                              ('fork', {}, None)):
        taken = capture.capture(base, build.build(base, **kwargs))
        judged = referee.judge(conn, taken, error)
        rows.append(referee.row(run, taken, judged))
        problems += referee.problems(run, judged, must)
        notes += referee.disagreements(run, judged)
    print('nova %s (%s), %s, libvirt %s:' % (
        base.nova, base.series, referee.URI, referee.version(conn)))
    print(referee.render(rows))
    for note in notes:
        print('note: %s' % note)
    for problem in problems:
        print('problem: %s' % problem)
    if problems:
        raise errors.TestFailure('libvirt %s: %d problem(s), see above' % (
            base.series, len(problems)))
    print('libvirt %s: ok' % base.series)
    return 0
