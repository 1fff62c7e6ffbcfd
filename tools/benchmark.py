#!/usr/bin/env python3
"""Benchmark of the fork: build, venv, per-scenario test time, flakiness.

Prints figures; it asserts nothing.  Targets: a build with a warm cache in
at most 10 s; uv makes the venv in at most half pip's time; each scenario
takes at most 1.5 times as long as nova's own reschedule reproducer
(PCIResourceRequestReschedulingTest) in the same run, the concurrent ones
3 times; 0 failures in 50 runs in a row of the concurrent scenarios.

    python3 tools/benchmark.py [--series 2024.1] [--release 29.4.0]
        [--runs 50] [--skip-build] [--skip-venv] [--skip-tests]

The build and venv figures are taken in a scratch copy of the project (so
the cold figures really start cold); the venv of the same lock is made with
uv and with pip (NOVA_FORK_INSTALLER), first with empty download caches of
their own, then again with those caches warm.  The test figures use the
project's own fork tree and venv.
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
from nova_fork.env import runtime  # noqa: E402
from nova_fork.env import venv  # noqa: E402
from nova_fork.proof import prove  # noqa: E402
from nova_fork.tree import build  # noqa: E402

INSTALLERS = ('uv', 'pip')
# Nova's own reproducer of a PCI reschedule (29.2.1 and later), the
# yardstick of the scenario times; the concurrent scenarios may take 3
# times as long, the others 1.5 times.
REFERENCE = ('nova.tests.functional.libvirt.test_pci_sriov_servers.'
             'PCIResourceRequestReschedulingTest')
CONCURRENT = 'test_concurrent_'


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


def flake_figures(series, release, runs):
    """The concurrent scenarios, runs times each, in one batch."""
    base = config.get_base(ROOT, series).for_release(release)
    tree = build.build(base)
    ids = [t for t in prove.run_module(base, tree, CONCURRENT)
           if t.startswith(tuple(m + '.' for m in base.regression))]
    if not ids:
        print('\nflake check: no concurrent scenario in %s' % (
            ', '.join(base.regression)))
        return
    start = time.monotonic()
    records = prove.run_repeated(base, tree, ids, runs)
    failed = [r for r in records if r['status'] != 'success']
    print('\nflake check: %s, %d times each in one batch (%d tests, %.0f '
          's): %d failed (target 0)' % (
              ', '.join(prove.short_id(base, t) for t in sorted(ids)),
              runs, len(records), time.monotonic() - start, len(failed)))
    for record in records:
        if record['status'] != 'success':
            reason = [line for line in record['reason'].splitlines()
                      if line.strip()] or [record['status']]
            print('  failed: %s: %s' % (
                prove.short_id(base, record['id']), reason[-1][:150]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--series', default='2024.1')
    parser.add_argument('--release', default='29.4.0',
                        help='the release of the line the tests run on '
                             '(default 29.4.0, which has nova\'s reproducer)')
    parser.add_argument('--runs', type=int, default=50,
                        help='runs of each concurrent scenario for the flake '
                             'check, in one batch (default 50; 0 skips it)')
    parser.add_argument('--skip-build', action='store_true')
    parser.add_argument('--skip-venv', action='store_true')
    parser.add_argument('--skip-tests', action='store_true')
    args = parser.parse_args()
    os.environ.pop('NOVA_FORK_ROOT', None)
    if not args.skip_build:
        build_figures(args.series)
    if not args.skip_venv:
        venv_figures(args.series)
    if not args.skip_tests:
        test_figures(args.series, args.release)
        if args.runs:
            flake_figures(args.series, args.release, args.runs)


if __name__ == '__main__':
    main()
