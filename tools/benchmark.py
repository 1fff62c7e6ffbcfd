#!/usr/bin/env python3
"""Benchmark of the fork: build, venv, per-scenario test time, flakiness.

Prints figures.  Targets: a build with a warm cache in at most 10 s; uv
makes the venv in at most half pip's time; each scenario takes at most 1.5
times as long as nova's own reschedule reproducer
(PCIResourceRequestReschedulingTest) in the same run, the concurrent ones 3
times.  The flake budget is enforced: 0 failures in 100 runs in one batch
of each concurrent and move scenario, or the benchmark exits non-zero,
after printing every failure's reason and the file that keeps its log.

    python3 tools/benchmark.py [--series 2024.1] [--release 29.4.0]
        [--runs 100] [--flake concurrent,move] [--workers 1]
        [--without UNIT]
        [--logs DIR] [--debug] [--record] [--skip-build] [--skip-venv]
        [--skip-times] [--skip-tests]

The build and venv figures are taken in a scratch copy of the project (so
the cold figures really start cold); the venv of the same lock is made with
uv and with pip (NOVA_FORK_INSTALLER), first with empty download caches of
their own, then again with those caches warm.  The test figures use the
project's own fork tree and venv.  With --record, the flake check writes
what it measured to doc/source/generated/flake-TREE.inc, which
doc/source/performance.rst includes; it is refused before anything runs
from a checkout with uncommitted changes (the fragment names the commit).

SIGTERM (as Ctrl-C) stops the benchmark and every process it started
(the batch's ``python -m subunit.run`` processes, stestr and its
workers, pip and uv), then it exits with one line.
"""

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nova_fork import config  # noqa: E402
from nova_fork.env import children  # noqa: E402
from nova_fork.env import runtime  # noqa: E402
from nova_fork.env import venv  # noqa: E402
from nova_fork import errors  # noqa: E402
from nova_fork import generated  # noqa: E402
from nova_fork.proof import prove  # noqa: E402
from nova_fork.tree import build  # noqa: E402

INSTALLERS = ('uv', 'pip')
# Nova's own reproducer of a PCI reschedule (29.2.1 and later), the
# yardstick of the scenario times; the concurrent scenarios may take 3
# times as long, the others 1.5 times.
REFERENCE = ('nova.tests.functional.libvirt.test_pci_sriov_servers.'
             'PCIResourceRequestReschedulingTest')
CONCURRENT = 'test_concurrent_'
# The flake check's kinds of scenario, as stestr filters.
FLAKE = {
    'concurrent': CONCURRENT,
    'move': r'test_pci_move_reschedule\.',
}


def timed(func, *args, **kwargs):
    start = time.monotonic()
    func(*args, **kwargs)
    return time.monotonic() - start


def scratch_copy(dest):
    files = subprocess.run(
        ['git', 'ls-files', '-co', '--exclude-standard'], cwd=ROOT,
        stdout=subprocess.PIPE, text=True, check=True).stdout.split()
    for name in files:
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, target)


def build_figures(series):
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        scratch_copy(root)
        base = config.get_base(root, series)
        cold = timed(build.build, base)
        shutil.rmtree(root / 'build')
        warm = timed(build.build, base)
        noop = timed(build.build, base)
    print('build, cold cache (fetch + verify + build): %6.1f s' % cold)
    print('build, warm cache (verify + build):         %6.1f s' % warm)
    print('build, tree already there (no-op):          %6.2f s' % noop)


def venv_figures(series):
    """uv's and pip's time to make the venv of the same lock, in one run."""
    saved = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        root = tmp / 'project'
        scratch_copy(root)
        base = config.get_base(root, series)
        rt = runtime.pick(base)
        # installing uv itself is not part of the figure
        venv.uv(root)
        os.environ['PIP_CACHE_DIR'] = str(tmp / 'pip-cache')
        os.environ['UV_CACHE_DIR'] = str(tmp / 'uv-cache')
        times = {}
        try:
            for cache in ('empty', 'warm'):
                for name in INSTALLERS:
                    os.environ['NOVA_FORK_INSTALLER'] = name
                    shutil.rmtree(rt.venv_dir, ignore_errors=True)
                    times[cache, name] = timed(venv.ensure, base)
        finally:
            os.environ.clear()
            os.environ.update(saved)
    print('\nvenv from %s with %s, the same lock, one run:' % (
        base.lock.relative_to(root), rt.describe()))
    print('  download caches    uv        pip       uv/pip')
    for cache in ('empty', 'warm'):
        print('  %-15s %6.1f s  %6.1f s  %6.2fx' % (
            cache, times[cache, 'uv'], times[cache, 'pip'],
            times[cache, 'uv'] / times[cache, 'pip']))
    print('  (target: uv/pip <= 0.5x)')


def test_figures(series, release):
    """Each scenario's time as a ratio to nova's reschedule reproducer.

    Both run in the same stestr run, on the same tree, so that the load of
    the machine weighs on both alike.
    """
    base = config.get_base(ROOT, series).for_release(release)
    tree = build.build(base)
    regex = '|'.join(list(base.regression) + [REFERENCE])
    records = prove.run_module(base, tree, regex)
    reference = [r['duration'] for t, r in records.items()
                 if t.startswith(REFERENCE + '.') and
                 r['status'] == 'success']
    print('\nscenario times on %s, nova %s, as a ratio to %s:' % (
        base.series, base.nova, REFERENCE.rsplit('.', 1)[-1]))
    if not reference:
        print('  the reproducer is not in nova %s (29.2.1 and later have '
              'it): use --release' % base.nova)
        return
    yardstick = max(reference)
    print('  %6.2f s          reference' % yardstick)
    for test_id, record in sorted(records.items()):
        if test_id.startswith(REFERENCE + '.'):
            continue
        duration = record['duration'] or 0
        target = 3.0 if CONCURRENT in test_id else 1.5
        print('  %6.2f s  %5.2fx  (target %.1fx)  %-7s %s' % (
            duration, duration / yardstick, target, record['status'],
            prove.short_id(base, test_id)))


def load():
    return '%.1f %.1f %.1f' % os.getloadavg()


def flake_figures(series, release, runs, kinds, without=None, logs=None,
                  workers=1, record=False):
    """The scenarios of kinds, runs times each in one batch.

    Returns the number of failed runs.  Each failure's details (traceback,
    captured logging) are written to a file of its own under logs, whose
    name is printed with the failure's reason.  With record, what it
    printed goes to doc/source/generated/flake-TREE.inc too.
    """
    base = config.get_base(ROOT, series)
    if release:
        base = base.for_release(release)
    tree = build.build(base, without=without)
    ids = prove.list_tests(base, tree, '|'.join(FLAKE[k] for k in kinds))
    if not ids:
        print('\nflake check: no %s scenario in %s' % (
            ' or '.join(kinds), ', '.join(base.regression)))
        return 0
    stamp = time.strftime('%Y%m%dT%H%M%S')
    logs = pathlib.Path(logs or build.build_dir(ROOT) / 'flake' / (
        '%s-%s' % (tree.name, stamp)))
    # the commit that runs, whatever the checkout holds by the end
    commit = generated.commit_of(ROOT)
    report = []
    report.append('%s on nova %s%s, %s: %d test%s, %d times each in one '
                  'batch of %d process%s; load average %s at the start' % (
                      tree.name, base.nova,
                      ' (without %s)' % without if without else '',
                      ' and '.join(kinds), len(ids),
                      's' if len(ids) > 1 else '', runs, workers,
                      'es' if workers > 1 else '', load()))
    print('\nflake check: %s' % report[-1], flush=True)
    start = time.monotonic()
    records = prove.run_repeated(base, tree, ids, runs, workers)
    # a skipped test (one a release cannot have) is not a flake
    failed = [r for r in records if r['status'] not in ('success', 'skip')]
    report.append('%d runs in %.0f s, load average %s at the end: %d '
                  'failed (budget 0)' % (len(records),
                                         time.monotonic() - start, load(),
                                         len(failed)))
    print('flake check: %s' % report[-1])
    reasons = []
    for number, record in enumerate(failed, 1):
        logs.mkdir(parents=True, exist_ok=True)
        log = logs / ('%03d-%s.log' % (number, record['id'].rsplit('.')[-1]))
        details = record.get('details', {}).items()
        log.write_text('%s: %s\n\n%s' % (
            record['id'], record['status'],
            '\n\n'.join('--- %s ---\n%s' % item for item in details)))
        reason = [line for line in record['reason'].splitlines()
                  if line.strip()] or [record['status']]
        reasons.append('%s: %s' % (prove.short_id(base, record['id']),
                                   reason[-1][:300]))
        print('  failed: %s\n    log: %s' % (reasons[-1], log))
    missing = len(ids) * runs - len(records)
    if missing:
        reasons.append('%d runs gave no result (the batch stopped)' %
                       missing)
        print('  %s' % reasons[-1])
    if record:
        path = generated.write(ROOT, flake_inc(commit, report, reasons),
                               generated.FOLDER / ('flake-%s.inc' %
                                                   tree.name))
        print('flake check: wrote %s' % path.relative_to(ROOT))
    return len(failed) + missing


def flake_inc(commit, report, reasons):
    """The RST fragment of a flake check, for performance.rst."""
    text = [
        '.. Written by tools/benchmark.py --record, which writes it when '
        'its flake',
        '   check runs; do not edit it by hand.',
        '',
        'Measured on %s at commit ``%s`` of the project, %d cores, with '
        '``python3 tools/benchmark.py %s``: %s; %s.' % (
            time.strftime('%Y-%m-%d'), commit,
            os.cpu_count(), ' '.join(sys.argv[1:]), report[0], report[1]),
    ]
    if reasons:
        text += ['', 'The failures::', '']
        text += ['    %s' % reason for reason in reasons]
    return '\n'.join(text) + '\n'


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--series', default='2024.1')
    parser.add_argument('--release',
                        help='the release of the line the tests run on '
                             '(default: the line\'s own; the scenario times '
                             'default to 29.4.0, which has nova\'s '
                             'reproducer)')
    parser.add_argument('--runs', type=int, default=100,
                        help='runs of each scenario for the flake check, in '
                             'one batch (default 100; 0 skips it)')
    parser.add_argument('--flake', default='concurrent,move',
                        help='the kinds of scenario the flake check runs, '
                             'of %s (default concurrent,move)' % ','.join(
                                 sorted(FLAKE)))
    parser.add_argument('--workers', type=int, default=1,
                        help='processes the flake check\'s batch is dealt '
                             'out to, as stestr --concurrency (default 1)')
    parser.add_argument('--without', metavar='UNIT',
                        help='the flake check on the tree without UNIT '
                             '(a mutant), not the fork')
    parser.add_argument('--logs', metavar='DIR',
                        help='the folder of the failures\' logs (default '
                             'build/flake/TREE-TIME)')
    parser.add_argument('--debug', action='store_true',
                        help='the logs at DEBUG level (nova\'s OS_DEBUG)')
    parser.add_argument('--record', action='store_true',
                        help='write the flake check\'s figures to '
                             'doc/source/generated/flake-TREE.inc')
    parser.add_argument('--skip-build', action='store_true')
    parser.add_argument('--skip-venv', action='store_true')
    parser.add_argument('--skip-times', action='store_true',
                        help='no scenario times, the flake check only')
    parser.add_argument('--skip-tests', action='store_true')
    args = parser.parse_args()
    kinds = args.flake.split(',')
    unknown = sorted(set(kinds) - set(FLAKE))
    if unknown:
        parser.error('--flake: no kind %s; the kinds are %s' % (
            ', '.join(unknown), ', '.join(sorted(FLAKE))))
    if args.workers < 1:
        parser.error('--workers: %d processes cannot run a batch; give 1 '
                     'or more' % args.workers)
    os.environ.pop('NOVA_FORK_ROOT', None)
    if args.debug:
        os.environ['OS_DEBUG'] = '1'
    try:
        with children.sigterm_stops_children():
            return run(args, kinds)
    except errors.ForkError as exc:
        sys.exit('benchmark: %s' % exc)
    except children.Terminated:
        sys.exit('benchmark: terminated (SIGTERM); its processes stopped')
    except KeyboardInterrupt:
        sys.exit('benchmark: interrupted')


def run(args, kinds):
    if args.record and not args.skip_tests and args.runs:
        # refused before the batch, not after it
        generated.refuse_dirty(ROOT, generated.FOLDER / 'flake-TREE.inc')
    if not args.skip_build:
        build_figures(args.series)
    if not args.skip_venv:
        venv_figures(args.series)
    if not args.skip_tests:
        if not args.skip_times:
            test_figures(args.series, args.release or '29.4.0')
        if args.runs and flake_figures(args.series, args.release, args.runs,
                                       kinds, args.without, args.logs,
                                       args.workers, args.record):
            sys.exit('flake check: over its budget of 0 failures')


if __name__ == '__main__':
    main()
