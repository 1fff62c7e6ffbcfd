"""Prove that the regression tests catch the bug.

The regression modules are run on the pristine base (import plus the test
commits), on the fork, and on the fork without each fix commit in turn;
a tree without a unit runs only the tests that the units it leaves out
affect (bases.ini).  Results are cached by tree commit id, lock file and
selection, which are reproducible, so a second command reuses what the
first one ran.
"""

from concurrent import futures
import dataclasses
import hashlib
import json
import os
import pathlib
import re
import subprocess
import tempfile
import threading
import time

from nova_fork import config
from nova_fork.env import runner
from nova_fork.env import runtime
from nova_fork.env import venv
from nova_fork import errors
from nova_fork import progress
from nova_fork.tree import build

PASS = 'pass'
# a test a column did not run (not one its selection names)
NOT_RUN = 'not run'
# Run by the base's python, from a folder of its own: a script's folder
# comes first on sys.path, and the tool's modules must not shadow the
# standard library's (cmd, venv) there.
SUMMARY_SCRIPT = (pathlib.Path(__file__).parent.parent / 'scripts' /
                  'subunit2json.py')
ASSERTION_RE = re.compile(r'(AssertionError|MismatchError)')


def classify(record, bug):
    """One word for one test's outcome, and whether it is the bug's.

    An assertion whose message holds one of the bug's failure texts
    (bases.ini, [bug] failures) is the bug's: FAIL (LABEL).
    """
    status, reason = record['status'], record['reason']
    if status == 'success':
        return PASS
    if status == 'skip':
        return 'skip'
    if ASSERTION_RE.search(reason):
        for label, text in bug.failures:
            if text in reason:
                return 'FAIL (%s)' % label
    lines = [s.strip() for s in reason.splitlines() if s.strip()]
    return 'ERROR (%s)' % (lines[-1][:60] if lines else status)


def is_bug_failure(outcome):
    return outcome.startswith('FAIL (')


def lacking(base):
    """The units of the fix the base's release lacks."""
    return build.lacking_units(
        base, build.fetch.fetch(base.root, base.nova, base.sha256))


def variants(base, lacking, mutants=True):
    """Column name, build arguments and selection, in table order.

    With mutants, one "without UNIT" column for each unit of the fix that
    the release lacks and the series carries.  The pristine release and
    the fork run every regression test (selection None); a tree without a
    unit runs only the tests that unit, and the units that go with it,
    affect (``selection``).
    """
    columns = [('pristine', {'pristine': True}, None), ('fork', {}, None)]
    if not mutants:
        return columns
    commits = base.commits()
    for commit in commits:
        if commit.is_fix and commit.unit in lacking:
            dropped = build.left_out(commits, commit.unit)
            also = sorted(dropped - {commit.unit})
            name = 'without %s' % commit.unit
            if also:
                # a later fix builds on this one: it goes too
                name += ' (and %s)' % ', '.join(also)
            columns.append((name, {'without': commit.unit},
                            selection(base, dropped)))
    return columns


def selection(base, units_left_out):
    """The stestr filter of a tree without units: the tests they affect.

    One regular expression: a test of the line's regression modules that
    the ``affects`` of one of the units matches.  None (every regression
    test) when one of them says nothing about the tests it affects.
    """
    units = config.load_units(base.root)
    affects = [units[name].affects for name in sorted(units_left_out)]
    if not affects or not all(affects):
        return None
    modules = '|'.join(re.escape(module) for module in base.regression)
    return '^(?=(?:%s)\\.).*(?:%s)' % (
        modules, '|'.join('(?:%s)' % a for a in affects))


# stestr workers of each run, unless NOVA_FORK_CONCURRENCY says
CONCURRENCY = 2


def settings(environ=None):
    """(jobs, concurrency) of the proofs' stestr runs.

    jobs: how many trees run at once (NOVA_FORK_JOBS, default one a CPU);
    concurrency: each run's stestr workers (NOVA_FORK_CONCURRENCY,
    default 2; 0 is stestr's own default, one a CPU).  A functional test
    sleeps about a quarter of its time (it polls the API), and the runs
    of other trees keep the CPUs busy while a run starts and ends (one
    worker left with the slowest tests).

    >>> settings({}) == (os.cpu_count() or 1, CONCURRENCY)
    True
    >>> settings({'NOVA_FORK_JOBS': '1', 'NOVA_FORK_CONCURRENCY': '0'})
    (1, 0)
    """
    environ = os.environ if environ is None else environ
    values = []
    for name, default, least, what in (
            ('NOVA_FORK_JOBS', os.cpu_count() or 1, 1,
             'runs at once (1 or more)'),
            ('NOVA_FORK_CONCURRENCY', CONCURRENCY, 0,
             'stestr workers a run (0: one a CPU)')):
        text = environ.get(name, '').strip()
        if not text:
            values.append(default)
        elif text.isdigit() and int(text) >= least:
            values.append(int(text))
        else:
            raise errors.UsageError('%s=%s: give a number of %s' % (
                name, text, what))
    return tuple(values)


def run_module(base, tree, regex=None, concurrency=None):
    """Run the regression module once; {test id: record}, uncached.

    concurrency: stestr's workers (settings() by default; 0 is stestr's
    own default).
    """
    python = venv.ensure(base)
    step = progress.Step()
    if concurrency is None:
        concurrency = settings()[1]
    workers = ['--concurrency', str(concurrency)] if concurrency else []
    proc = runner.stestr(base, tree,
                         ['run', '--subunit'] + workers +
                         filters(base, regex),
                         stdout=subprocess.PIPE)
    records = {record['id']: record
               for record in _summary(base, python, tree, proc.stdout)}
    step.done('stestr: %s, %s' % (progress.where(tree, base.root),
                                  _tests(records)))
    return records


def _tests(records):
    return progress.tests(r['status'] for r in records.values())


def _subunit_run(base, python, tree, args):
    """``python -m subunit.run ARGS`` in tree; its subunit stream.

    The stream goes through a file, not a pipe: under eventlet's monkey
    patching (nova 34 with OS_NOVA_DISABLE_EVENTLET_PATCHING=False), the
    runner's writes to a pipe wait for the hub forever.
    """
    with tempfile.TemporaryFile() as stream:
        runtime.run(base, [str(python), '-m', 'subunit.run'] + list(args),
                    cwd=tree, env=runner.cache_bytecode(
                        runner.environ(python, base.setenv), base.root),
                    stdout=stream)
        stream.seek(0)
        return stream.read()


def list_tests(base, tree, regex):
    """The ids of the regression tests that match regex; none is run."""
    python = venv.ensure(base)
    stream = _subunit_run(base, python, tree,
                          ['--list'] + list(base.regression))
    return [record['id'] for record in _summary(base, python, tree, stream)
            if re.search(regex, record['id'])]


def _summary(base, python, tree, stream, details=False):
    """[record] of a subunit stream, read by the base's python.

    details: the failures' attachments too (the script's --details).
    """
    summary = runtime.run(
        base, [str(python), str(SUMMARY_SCRIPT)] +
        (['--details'] if details else []), input=stream,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if summary.returncode:
        raise errors.ForkError('reading the results of %s in %s failed: %s'
                               % (' '.join(base.regression), tree,
                                  summary.stderr
                                  .decode(errors='replace').strip()
                                  .splitlines()[-1:]))
    return [json.loads(line)
            for line in summary.stdout.decode().splitlines()]


def shares(names, workers):
    """names dealt out to workers, as stestr partitions a run.

    >>> shares(['a', 'b', 'a', 'b', 'a'], 2)
    [['a', 'a', 'a'], ['b', 'b']]
    """
    return [share for share in (names[n::workers] for n in range(workers))
            if share]


def run_repeated(base, tree, test_ids, times, workers=1):
    """Run each test times times, in one batch; [record].

    One batch, as a flake check wants: ``subunit.run`` loads every name
    given, so a name given times times runs times times; workers
    processes run their shares at once, as stestr's --concurrency does.
    A failure's record has its ``details`` (traceback, captured logging),
    to keep.
    """
    python = venv.ensure(base)
    names = [test_id for _ in range(times) for test_id in test_ids]

    def run(share):
        stream = _subunit_run(base, python, tree, share)
        # subunit.run first says which tests exist: not results
        records = _summary(base, python, tree, stream, details=True)
        return [record for record in records
                if record['status'] != 'exists']

    with futures.ThreadPoolExecutor(max_workers=workers) as pool:
        return [record for records in pool.map(run, shares(names, workers))
                for record in records]


def filters(base, selected=None):
    """The stestr filters of a run.

    The selection, or every regression module of the line.
    """
    return [selected] if selected else list(base.regression)


def cache_key(head, lock, filters):
    """The key of one run's results: tree commit, lock and stestr filters.

    Trees and locks are reproducible, so the same tree and lock give the
    same key on any machine; the filters (the regression modules, or the
    selection of a tree without a unit) are part of the key, so a run of
    some tests is never taken for a run of others.

    >>> a = cache_key('c0ffee', 'pbr==6.1.1\\n', ['m.a', 'm.b'])
    >>> a == cache_key('c0ffee', 'pbr==6.1.1\\n', ['m.a', 'm.b']), len(a)
    (True, 20)
    >>> len({a, cache_key('c0ffee', 'pbr==6.1.1\\n', ['m.a']),
    ...      cache_key('c0ffee', 'pbr==6.1.1\\n', ['m.a|m.b'])})
    3
    """
    text = '\0'.join([head, lock] + list(filters))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def cache_dir(root):
    return build.build_dir(root) / 'results'


@dataclasses.dataclass
class Run:
    """One column of a line's table: a tree, the tests it runs, results."""

    base: object
    column: str
    tree: pathlib.Path
    # the stestr filter of the tests it runs; None: every regression test
    selected: str = None
    # where its results are cached
    cache: pathlib.Path = None
    records: dict = None
    cached: bool = False
    # the stestr run's wall time, when it ran
    seconds: float = 0.0


def prepare(base, column='fork', selected=None, **kwargs):
    """A column's Run: its tree built, its results read if cached.

    Results are cached by the tree's commit, the lock and the stestr
    filters; a selection that is not cached yet is taken from a cached
    run of every test on the same tree, when there is one.
    """
    tree = build.build(base, **kwargs)
    head = build.gitutils.out(tree, 'rev-parse', 'HEAD')
    lock = base.lock.read_text()
    where = progress.where(tree, base.root)
    run = Run(base, column, tree, selected, cache_dir(base.root) / (
        '%s.json' % cache_key(head, lock, filters(base, selected))))
    full = cache_dir(base.root) / ('%s.json' % cache_key(
        head, lock, filters(base)))
    if run.cache.is_file():
        run.records = json.loads(run.cache.read_text())
        progress.say('stestr: %s, %s (cached)' % (
            where, _tests(run.records)), once=True)
    elif selected is not None and full.is_file():
        pattern = re.compile(selected)
        run.records = {test_id: record for test_id, record
                       in json.loads(full.read_text()).items()
                       if pattern.search(test_id)}
        progress.say('stestr: %s, %s (cached, of a run of every test)' % (
            where, _tests(run.records)), once=True)
    run.cached = run.records is not None
    return run


class Pool(object):
    """Runs the stestr runs of Runs not cached, jobs at once, as added.

    A context manager: leaving it waits for the runs (and raises the
    first error).  With one job each run runs when it is added.  A run in
    a Debian root runs alone, in the main thread, at the end (its mounts
    are the root's, and set a signal handler).
    """

    def __init__(self, jobs=None):
        self.jobs = jobs or settings()[0]
        self.pool = (futures.ThreadPoolExecutor(self.jobs)
                     if self.jobs > 1 else None)
        self.pending = []
        self.rooted = []

    def add(self, runs):
        # the runs of every test first: the longest
        for run in sorted((r for r in runs if r.records is None),
                          key=lambda r: r.selected is not None):
            # made or checked once, before the runs share it
            venv.ensure(run.base)
            if runtime.pick(run.base).in_root:
                self.rooted.append(run)
            elif self.pool is None:
                _execute(run)
            else:
                self.pending.append(self.pool.submit(_execute, run))

    def wait(self):
        for run in self.rooted:
            _execute(run)
        self.rooted = []
        for future in self.pending:
            future.result()

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        try:
            if kind is None:
                self.wait()
        finally:
            if self.pool is not None:
                for future in self.pending:
                    future.cancel()
                self.pool.shutdown(wait=True)
        return False


def execute(runs, jobs=None):
    """Run the runs whose results are not cached (Pool), and wait."""
    with Pool(jobs) as pool:
        pool.add(runs)


def store(path, data):
    """Write data as JSON to the cache file path, whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name('.%s.partial-%d-%d' % (
        path.name, os.getpid(), threading.get_ident()))
    partial.write_text(json.dumps(data, indent=1, sort_keys=True))
    partial.replace(path)


def _execute(run):
    start = time.monotonic()
    run.records = run_module(run.base, run.tree, run.selected)
    run.seconds = time.monotonic() - start
    store(run.cache, run.records)


def results(base, selected=None, **kwargs):
    """({test id: record}, cached) of the regression modules on one tree.

    selected: the stestr filter of the tests to run (``selection``), or
    None for every regression test.
    """
    run = prepare(base, selected=selected, **kwargs)
    execute([run], jobs=1)
    return run.records, run.cached


def plan(base, mutants=True, lacks=None):
    """The Runs of a line's table, in column order, trees built.

    lacks: the units the release lacks (``lacking``), if known.
    """
    lacks = lacking(base) if lacks is None else lacks
    return [prepare(base, name, selected, **kwargs) for name, kwargs,
            selected in variants(base, lacks, mutants)]


def rows_of(base, runs):
    """{short id: {column: (test id, outcome, duration)}} of done runs."""
    bug = config.load_bug(base.root)
    rows = {}
    for run in runs:
        for test_id, record in run.records.items():
            rows.setdefault(short_id(base, test_id), {})[run.column] = (
                test_id, classify(record, bug), record['duration'])
    return rows


def table(base, mutants=True):
    """Run every column; (columns, {short id: {column: outcome}}, cached).

    Without mutants, only the pristine release and the fork.  A column
    without a unit has the tests its selection ran; cached: the columns
    whose results came from the cache.
    """
    runs = plan(base, mutants)
    execute(runs)
    return ([r.column for r in runs], rows_of(base, runs),
            {r.column for r in runs if r.cached})


def short_id(base, test_id):
    """The test id without its regression module.

    >>> base = type('Base', (), {'regression': ('a.b', 'a.c')})
    >>> short_id(base, 'a.c.Test.test_x'), short_id(base, 'd.Test.test_y')
    ('Test.test_x', 'd.Test.test_y')
    """
    for module in base.regression:
        if test_id.startswith(module + '.'):
            return test_id[len(module) + 1:]
    return test_id


def render(columns, rows):
    """An RST simple table: scenario by column."""
    header = ['scenario'] + columns
    body = [[short] + [rows[short].get(c, (None, NOT_RUN, None))[1]
                       for c in columns] for short in sorted(rows)]
    widths = [max(len(r[i]) for r in [header] + body)
              for i in range(len(header))]
    rule = '  '.join('=' * w for w in widths)
    fmt = '  '.join('%%-%ds' % w for w in widths)
    lines = [rule, (fmt % tuple(header)).rstrip(), rule]
    lines += [(fmt % tuple(r)).rstrip() for r in body]
    lines.append(rule)
    return '\n'.join(lines)


def affected_pattern(base, lacking):
    """The regression tests the release's lacking units make fail.

    Each unit says which tests it affects (bases.ini, affects); a release
    fails those of the units it lacks, and passes the others.
    """
    units = config.load_units(base.root)
    return '|'.join('(?:%s)' % units[name].affects for name in sorted(lacking)
                    if units[name].affects)


def reproduce_problems(base, rows, lacking):
    """What keeps the table from showing the bug; [] when it does.

    A test that a unit the release lacks affects must fail on the pristine
    release for the bug's reason; every other test must pass there (the
    release has what it tests, or it is a guard the bug does not touch);
    every test must pass on the fork.
    """
    pattern = affected_pattern(base, lacking)
    affected = re.compile(pattern) if pattern else None
    problems = []
    hits = 0
    for short, cells in sorted(rows.items()):
        test_id, pristine, _ = cells.get('pristine', (short, '-', None))
        if affected and affected.search(test_id):
            hits += 1
            if not is_bug_failure(pristine):
                problems.append('%s: on the pristine base it should fail for '
                                'the bug\'s reason, it gave %s' % (
                                    short, pristine))
        elif pristine != PASS:
            problems.append('%s: on the pristine base it should pass (nova '
                            '%s lacks no unit it tests), it gave %s' % (
                                short, base.nova, pristine))
        fork = cells.get('fork', (None, '-', None))[1]
        if fork != PASS:
            problems.append('%s: on the fork it gave %s' % (short, fork))
    if not hits:
        problems.append('no regression test is affected by the units nova %s '
                        'lacks (%s)' % (
                            base.nova, ', '.join(sorted(lacking)) or 'none'))
    return problems


def mutant_problems(base, columns, rows):
    problems = []
    for column in columns:
        if not column.startswith('without'):
            continue
        # the tests the column ran: a tree without a unit runs only
        # those it affects
        failing = [s for s, cells in rows.items()
                   if column in cells and cells[column][1] != PASS]
        if not failing:
            problems.append('the fork %s passes every regression test: '
                            'that fix is not covered' % column)
    for short, cells in sorted(rows.items()):
        if cells.get('fork', (None, '-', None))[1] != PASS:
            problems.append('%s fails on the fork' % short)
    return problems
