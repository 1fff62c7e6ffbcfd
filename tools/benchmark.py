#!/usr/bin/env python3
"""Benchmark of the fork: build, venv, per-scenario test time, flakiness.

Prints figures; it asserts nothing.  Targets (issue 2): a build with a warm
cache in at most 10 s, no scenario slower than about 4 s on 2 cores, and 0
failures in 50 consecutive runs of the regression module.

    python3 tools/benchmark.py [--series 2024.1] [--runs 50]

The build and venv figures are taken in a scratch copy of the project (so
the cold figures really start cold); the test figures use the project's own
fork tree and venv.
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
from nova_fork import venv  # noqa: E402


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
        venv_time = timed(venv.ensure, base)
    print('build, cold cache (fetch + verify + build): %6.1f s' % cold)
    print('build, warm cache (verify + build):         %6.1f s' % warm)
    print('build, tree already there (no-op):          %6.2f s' % noop)
    print('venv from the lock file, fresh:             %6.1f s' % venv_time)


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
    args = parser.parse_args()
    os.environ.pop('NOVA_FORK_ROOT', None)
    if not args.skip_build:
        build_figures(args.series)
    test_figures(args.series, args.runs)


if __name__ == '__main__':
    main()
