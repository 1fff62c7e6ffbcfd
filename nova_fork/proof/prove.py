"""Prove that the regression tests catch the bug.

The regression module is run on the pristine base (import plus the test
commit), on the fork, and on the fork without each fix commit in turn.
Results are cached by tree commit id and lock file, which are reproducible,
so a second command reuses what the first one ran.
"""

import hashlib
import json
import pathlib
import re
import subprocess

from nova_fork import config
from nova_fork.env import runner
from nova_fork.env import runtime
from nova_fork.env import venv
from nova_fork import errors
from nova_fork import progress
from nova_fork.tree import build

PASS = 'pass'
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
    """Column name and build arguments, in table order.

    With mutants, one "without UNIT" column for each unit of the fix that
    the release lacks and the series carries.
    """
    columns = [('pristine', {'pristine': True}), ('fork', {})]
    if not mutants:
        return columns
    commits = base.commits()
    for commit in commits:
        if commit.is_fix and commit.unit in lacking:
            also = sorted(build.left_out(commits, commit.unit) -
                          {commit.unit})
            name = 'without %s' % commit.unit
            if also:
                # a later fix builds on this one: it goes too
                name += ' (and %s)' % ', '.join(also)
            columns.append((name, {'without': commit.unit}))
    return columns


def run_module(base, tree, regex=None):
    """Run the regression module once; {test id: record}, uncached."""
    python = venv.ensure(base)
    step = progress.Step()
    filters = [regex] if regex else list(base.regression)
    proc = runner.stestr(base, tree, ['run', '--subunit'] + filters,
                         stdout=subprocess.PIPE)
    records = {record['id']: record
               for record in _summary(base, python, tree, proc.stdout)}
    step.done('stestr: %s, %s' % (progress.where(tree, base.root),
                                  _tests(records)))
    return records


def _tests(records):
    return progress.tests(r['status'] for r in records.values())


def _summary(base, python, tree, stream):
    """[record] of a subunit stream, read by the base's python."""
    summary = runtime.run(
        base, [str(python), str(SUMMARY_SCRIPT)], input=stream,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if summary.returncode:
        raise errors.ForkError('reading the results of %s in %s failed: %s'
                               % (' '.join(base.regression), tree,
                                  summary.stderr
                                  .decode(errors='replace').strip()
                                  .splitlines()[-1:]))
    return [json.loads(line)
            for line in summary.stdout.decode().splitlines()]


def run_repeated(base, tree, test_ids, times):
    """Run each test times times, in one process; [record] in order.

    One batch, as a flake check wants: ``subunit.run`` loads every name
    given, so a name given times times runs times times.
    """
    python = venv.ensure(base)
    names = [test_id for _ in range(times) for test_id in test_ids]
    proc = runtime.run(base, [str(python), '-m', 'subunit.run'] + names,
                       cwd=tree, env=runner.environ(python, base.setenv),
                       stdout=subprocess.PIPE)
    # subunit.run first says which tests exist: not results
    return [record for record in _summary(base, python, tree, proc.stdout)
            if record['status'] != 'exists']


def results(base, **kwargs):
    """{test id: record} of the regression module on one tree."""
    tree = build.build(base, **kwargs)
    head = build.gitutils.out(tree, 'rev-parse', 'HEAD')
    key = hashlib.sha256((head + base.lock.read_text()).encode()).hexdigest()
    cache = build.build_dir(base.root) / 'results' / ('%s.json' % key[:20])
    if cache.is_file():
        records = json.loads(cache.read_text())
        progress.say('stestr: %s, %s (cached)' % (
            progress.where(tree, base.root), _tests(records)), once=True)
        return records
    records = run_module(base, tree)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(records, indent=1, sort_keys=True))
    return records


def table(base, mutants=True):
    """Run every column; return (columns, {short id: {column: outcome}}).

    Without mutants, only the pristine release and the fork.
    """
    columns = variants(base, lacking(base), mutants)
    bug = config.load_bug(base.root)
    rows = {}
    for name, kwargs in columns:
        for test_id, record in results(base, **kwargs).items():
            rows.setdefault(short_id(base, test_id), {})[name] = (
                test_id, classify(record, bug), record['duration'])
    return [name for name, _ in columns], rows


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
    body = [[short] + [rows[short].get(c, (None, '-', None))[1]
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
        failing = [s for s, cells in rows.items()
                   if cells.get(column, (None, '-', None))[1] != PASS]
        if not failing:
            problems.append('the fork %s passes every regression test: '
                            'that fix is not covered' % column)
    for short, cells in sorted(rows.items()):
        if cells.get('fork', (None, '-', None))[1] != PASS:
            problems.append('%s fails on the fork' % short)
    return problems
