"""nova-fork: build, test and export the patched Nova fork."""

import argparse
import json
import sys
import time

from nova_fork import check
from nova_fork import config
from nova_fork.debian import series
from nova_fork.dist import export
from nova_fork.dist import review
from nova_fork.dist import sdist
from nova_fork.env import chroot
from nova_fork.env import novatox
from nova_fork.env import runner
from nova_fork.env import runtime
from nova_fork.env import venv
from nova_fork import errors
from nova_fork.proof import capture
from nova_fork.proof import gate
from nova_fork.proof import matrix
from nova_fork.proof import prove
from nova_fork.proof import referee
from nova_fork.tree import backport
from nova_fork.tree import build
from nova_fork.tree import refresh


def _line(args, root):
    """The line the command names; a usage error naming them if none."""
    if not args.series:
        raise errors.UsageError(
            'name a line: %s (bases.ini)' % ', '.join(
                config.load_bases(root)))
    return config.get_base(root, args.series)


def _base(args, root):
    return _line(args, root).for_release(getattr(args, 'release', None))


def build_cmd(args, root):
    base = _base(args, root)
    print(build.build(base, pristine=args.pristine, without=args.without))
    return 0


def venv_cmd(args, root):
    print(venv.ensure(_line(args, root)))
    return 0


def lock_cmd(args, root):
    base = _line(args, root)
    print(venv.lock(base, args.constraints))
    return 0


def test_cmd(args, root):
    base = _base(args, root)
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


def lint_cmd(args, root):
    lines = [_line(args, root)] if args.series else \
        list(config.load_bases(root).values())
    failed = [base.series for base in lines
              if runner.lint(base, build.build(base))]
    if failed:
        raise errors.TestFailure('flake8 found problems in what the fork '
                                 'adds under nova/ on %s (see above)' %
                                 ', '.join(failed))
    return 0


def tox_cmd(args, root):
    base = _line(args, root)
    code = novatox.run(base, args.stestr_args, pristine=args.pristine)
    if code:
        raise errors.TestFailure('tox %s failed in the %s tree (exit %d)' % (
            ' '.join(args.stestr_args), base.series, code))
    return 0


def gate_cmd(args, root):
    base = _line(args, root)
    steps = gate.parse_only(args.only)
    selections = gate.parse_selections(args.select)
    start = time.monotonic()
    rows, failed = gate.gate(base, steps, selections, args.pristine)
    print('gate %s (nova %s%s), %s, %s:' % (
        base.series, base.nova, ', pristine' if args.pristine else '',
        time.strftime('%Y-%m-%d'), gate._duration(time.monotonic() - start)))
    print(gate.render(rows))
    if failed:
        raise errors.TestFailure('gate %s: %s failed (see above)' % (
            base.series, ', '.join(failed)))
    print('gate %s: ok' % base.series)
    return 0


def export_cmd(args, root):
    print(export.export(_base(args, root)))
    return 0


def sdist_cmd(args, root):
    path, notes = sdist.sdist(_base(args, root), check=args.check,
                              tests=args.stestr_args)
    for note in notes:
        print(note)
    print(path)
    return 0


def review_cmd(args, root):
    result = review.review(_line(args, root), bug=args.bug, onto=args.onto)
    for note in result.notes:
        print(note)
    print(result.dest)
    return 0


def debian_cmd(args, root):
    if args.root_only:
        print(series.prepare(root, args.suite))
        return 0
    series.make(root, args.suite, tests=not args.no_tests)
    return 0


def lines_cmd(args, root):
    """The lines of bases.ini, one a line, for scripts (.ci/run)."""
    for base in config.load_bases(root).values():
        if args.with_root and not any(
                word.startswith(runtime.DEBIAN) for word in base.runtime):
            continue
        if args.ci and args.ci not in base.ci:
            continue
        print(base.series)
    return 0


def refresh_cmd(args, root):
    changed = refresh.refresh(_base(args, root))
    for path in changed:
        print(path)
    if not changed:
        print('nothing to refresh: the project already has what the tree '
              'holds')
    return 0


def backport_cmd(args, root):
    base = _base(args, root)
    for path in backport.backport(base):
        print(path)
    return 0


def check_cmd(args, root):
    report = check.check(root, args.version)
    if args.json:
        print(json.dumps(report.as_json()))
    else:
        print('\n'.join(check.render(report, config.load_bug(root))))
    # 0: has every unit, 1: needs some (errors exit 2 or more)
    return 1 if report.needs else 0


def _prove(args, root, problems_of, mutants):
    base = _base(args, root)
    columns, rows = prove.table(base, mutants)
    print(prove.render(columns, rows))
    problems = problems_of(base, columns, rows)
    for problem in problems:
        print('problem: %s' % problem)
    if problems:
        raise errors.TestFailure('%s %s: %d problem(s), see above' % (
            args.command, base.series, len(problems)))
    print('%s %s: ok' % (args.command, base.series))
    return 0


def reproduce_cmd(args, root):
    return _prove(args, root, lambda base, columns, rows:
                  prove.reproduce_problems(base, rows, prove.lacking(base)),
                  mutants=False)


def mutants_cmd(args, root):
    return _prove(args, root, prove.mutant_problems, mutants=True)


def must_repeat(base):
    """The tests where the pristine release repeats a device, a regex."""
    units = config.load_units(base.root)
    return '|'.join('(?:%s)' % units[name].repeats
                    for name in sorted(prove.lacking(base))
                    if units[name].repeats)


def libvirt_cmd(args, root):
    if not args.series:
        args.series = next(iter(config.load_bases(root)))
    base = _base(args, root)
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


def matrix_cmd(args, root):
    if args.release and len(args.lines) != 1:
        raise errors.UsageError('--release takes one line, not %s' % (
            ', '.join(args.lines) or 'all of them'))
    table, problems = matrix.matrix(root, args.lines or None, args.release)
    print(matrix.render(table))
    for label, found in problems.items():
        for problem in found:
            print('problem: %s: %s' % (label, problem))
    if problems:
        raise errors.TestFailure('matrix: %d line(s) with problems, see '
                                 'above' % len(problems))
    print('matrix: ok, %s' % time.strftime('%Y-%m-%d'))
    return 0


def line_options(parser, release=True):
    """The LINE argument, and --release for another release of it."""
    parser.add_argument('series', nargs='?', metavar='line',
                        help='a line of bases.ini (nova-fork lines)')
    if release:
        parser.add_argument('--release', metavar='VERSION',
                            help='another release of the line, listed in '
                                 'its releases in bases.ini')


def variant_options(parser):
    group = parser.add_mutually_exclusive_group()
    group.add_argument('--pristine', action='store_true',
                       help='the upstream release with only our new test '
                            'files, none of the fixes')
    group.add_argument('--without', metavar='UNIT',
                       help='leave the commit of a unit of the fix out '
                            '(and those that build on it)')


def make_parser():
    parser = argparse.ArgumentParser(
        prog='nova-fork', description=__doc__.split('\n')[0])
    sub = parser.add_subparsers(dest='command', metavar='COMMAND')
    sub.required = True

    p = sub.add_parser('build', help='fetch, verify and materialize a tree; '
                       'print its path')
    line_options(p)
    variant_options(p)
    p.set_defaults(func=build_cmd)

    p = sub.add_parser('venv', help='build or reuse the test venv from the '
                       'lock file; print its python')
    line_options(p, release=False)
    p.set_defaults(func=venv_cmd)

    p = sub.add_parser('lock', help='resolve the test dependencies and write '
                       'the lock file')
    line_options(p, release=False)
    p.add_argument('--constraints', metavar='FILE',
                   help="upstream's upper-constraints for the series; "
                        'without it, the newest releases on PyPI (for a '
                        'series upstream has not published them for yet)')
    p.set_defaults(func=lock_cmd)

    p = sub.add_parser('test', help='run stestr in a tree with its venv')
    line_options(p)
    variant_options(p)
    p.add_argument('--path', choices=sorted(runner.PATHS),
                   default='functional',
                   help='the test path stestr discovers (default: '
                        'functional)')
    p.add_argument('--regression', action='store_true',
                   help="only the line's regression modules (bases.ini)")
    p.set_defaults(func=test_cmd, stestr_args=[])

    p = sub.add_parser('lint', help="flake8 with nova's configuration and "
                       'local checks over what the fork adds under nova/')
    line_options(p, release=False)
    p.set_defaults(func=lint_cmd)

    p = sub.add_parser('tox', help="run the tree's own tox.ini (arguments "
                       'after --) with the line\'s lock as constraints')
    line_options(p, release=False)
    p.add_argument('--pristine', action='store_true',
                   help='in the pristine release\'s tree')
    p.set_defaults(func=tox_cmd, stestr_args=[])

    p = sub.add_parser('gate', help="nova's gate through the tree's tox.ini: "
                       'pep8 (flake8 with hacking), py3, functional, '
                       'releasenotes; a table of counts and times')
    line_options(p, release=False)
    p.add_argument('--pristine', action='store_true',
                   help="on the pristine release's tree")
    p.add_argument('--only', metavar='STEPS',
                   help='comma-separated steps of %s' % ','.join(gate.STEPS))
    p.add_argument('--select', metavar='STEP=TESTS', action='append',
                   help='a test selection (stestr filters) for py3 or '
                        'functional; may be repeated')
    p.set_defaults(func=gate_cmd)

    p = sub.add_parser('export', help='write the series as format-patch '
                       'files to dist/SERIES/')
    line_options(p)
    p.set_defaults(func=export_cmd)

    p = sub.add_parser('sdist', help="write the fork as a source tarball "
                       "made by pbr's sdist, version RELEASE.postBUG, to "
                       'dist/sdist/LINE/ (for kolla-build type = local)')
    line_options(p)
    p.add_argument('--check', action='store_true',
                   help='also pip install it into a scratch venv over the '
                        "line's venv and run the line's regression modules "
                        '(or the tests after --) against the installed nova')
    p.set_defaults(func=sdist_cmd, stestr_args=[])

    p = sub.add_parser('review', help='write the commits marked review, '
                       'signed off by you, to dist/review/LINE/ for git am '
                       'and git review')
    line_options(p, release=False)
    p.add_argument('--bug', metavar='N',
                   help='the Launchpad bug of the move path: fixes close '
                        'it, the other commits are related to it')
    p.add_argument('--onto', metavar='GITDIR[@REF]',
                   help='also check that the series applies onto REF '
                        '(default HEAD) of this nova clone or mirror')
    p.set_defaults(func=review_cmd)

    p = sub.add_parser('lines', help='list the lines of bases.ini, one a '
                       'line')
    p.add_argument('--with-root', action='store_true',
                   help='only the lines whose runtime names a Debian root')
    p.add_argument('--ci', choices=config.CI_STEPS,
                   help='only the lines whose ci option in bases.ini has '
                        'this step of .ci/run')
    p.set_defaults(func=lines_cmd)

    p = sub.add_parser('refresh', help='write the commits of an edited tree '
                       'back to the patches and files of its line')
    line_options(p)
    p.set_defaults(func=refresh_cmd)

    p = sub.add_parser('backport', help="cherry-pick the commits of the "
                       "line it backports onto the line's release, and "
                       "write them back as its patches")
    line_options(p)
    p.set_defaults(func=backport_cmd)

    p = sub.add_parser('check', help='say which units of the fix a nova '
                       'release has and needs, and which line serves it; '
                       'exit 0 when it has them all, 1 when it needs some')
    p.add_argument('version')
    p.add_argument('--json', action='store_true',
                   help='print {"version", "line", "has", "needs"}')
    p.set_defaults(func=check_cmd)

    p = sub.add_parser('reproduce', help='show that the regression tests '
                       'fail on the pristine base for the bug')
    line_options(p)
    p.set_defaults(func=reproduce_cmd)

    p = sub.add_parser('mutants', help='show that leaving out each unit of '
                       'the fix makes a regression test fail')
    line_options(p)
    p.set_defaults(func=mutants_cmd)

    p = sub.add_parser('libvirt', help="hand the PCI hostdevs of the "
                       "regression tests' guests to real libvirt (its test "
                       'driver): it refuses those of the pristine release '
                       'that repeat a device, and takes every guest of the '
                       'fork (default line: master)')
    line_options(p)
    p.set_defaults(func=libvirt_cmd)

    p = sub.add_parser('debian', help="a quilt series for Debian's own nova "
                       'package of a suite (dist/debian/SUITE), checked '
                       "after Debian's patches and on the suite's Python "
                       'stack')
    p.add_argument('suite', choices=sorted(chroot.SUITES),
                   help='the Debian suite; its nova picks the line')
    p.add_argument('--no-tests', action='store_true',
                   help='write and check the series (quilt, dpkg-source) '
                        "but leave out the tests in the suite's root")
    p.add_argument('--root-only', action='store_true',
                   help="only make (or reuse) the suite's Debian root with "
                        "Debian's Python stack for nova's tests; print its "
                        'path')
    p.set_defaults(func=debian_cmd)

    p = sub.add_parser('matrix', help='reproduce and mutants for every line '
                       '(or those named), as one table: a row a line')
    p.add_argument('lines', nargs='*', metavar='line')
    p.add_argument('--release', metavar='VERSION',
                   help='another release of the (one) line named')
    p.set_defaults(func=matrix_cmd)
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
        return args.func(args, root)
    except errors.ForkError as exc:
        print('nova-fork: error: %s' % exc, file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print('nova-fork: interrupted', file=sys.stderr)
        return 130


if __name__ == '__main__':
    sys.exit(main())
