#!/usr/bin/env python3
"""Benchmark of the fork: build, venv, per-scenario test time, flakiness.

Prints figures; it asserts nothing.  Targets (issue 2): a build with a warm
cache in at most 10 s, no scenario slower than about 4 s on 2 cores, and 0
failures in 50 consecutive runs of the regression module.  Issue 8: uv
makes the venv in at most half pip's time.

    python3 tools/benchmark.py [--series 2024.1] [--runs 50]
        [--skip-build] [--skip-venv] [--skip-tests]

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

from nova_fork import build  # noqa: E402
from nova_fork import config  # noqa: E402
from nova_fork import prove  # noqa: E402
from nova_fork import runtime  # noqa: E402
from nova_fork import venv  # noqa: E402

INSTALLERS = ('uv', 'pip')


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


def test_figures(series, runs):
    base = config.get_base(ROOT, series)
    tree = build.build(base)
    records = prove.run_module(base, tree)
    print('\nscenario times on the fork (%s):' % base.regression)
    prefix = base.regression + '.'
    for test_id, record in sorted(records.items()):
        print('  %6.2f s  %-7s %s' % (record['duration'] or 0,
                                      record['status'],
                                      test_id.replace(prefix, '')))
    if runs:
        failures = 0
        start = time.monotonic()
        for n in range(runs):
            records = prove.run_module(base, tree)
            bad = [t for t, r in records.items() if r['status'] != 'success']
            if bad or not records:
                failures += 1
                print('  run %d failed: %s' % (n + 1, ', '.join(bad)))
        print('\nflake check: %d/%d runs failed (%.0f s)' % (
            failures, runs, time.monotonic() - start))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--series', default='2024.1')
    parser.add_argument('--runs', type=int, default=50,
                        help='runs of the regression module for the flake '
                             'check (default 50; 0 skips it)')
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
        test_figures(args.series, args.runs)


if __name__ == '__main__':
    main()
