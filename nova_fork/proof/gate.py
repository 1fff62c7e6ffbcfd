"""Nova's gate on a fork tree, through the tree's own tox.ini.

``nova-fork gate LINE`` runs, in build/LINE (or the pristine release's
tree with --pristine), the tox environments that nova's check jobs run:
flake8 with nova's hacking checks over the whole tree, the unit suite on
the line's Python, the functional suite and the release notes build.

Each step's result is a record (a dict, JSON in the cache): its exit
code, time and load, and for the suites the tests it ran, read from the
subunit streams the run added to the tree's stestr repository, not from
its printed summary.  Every test that failed on the fork is run again on
the release as upstream ships it (build/LINE-release, only those, by
id): one that fails there too is upstream's (``shared``), one that does
not, or that the release does not have (a test the fork adds), is
``ours``.  Records are
cached by the tree's content (its commit's git tree), the lock, the step,
its tox environment and its selection (prove's cache, under
build/results/gate/), so a step of a tree and lock already run is not run
again, even when only commit messages changed (the "cherry picked from"
lines that change down the chain with every change above).
"""

import json
import os
import pathlib
import re
import subprocess
import tempfile
import time

from nova_fork.env import novatox
from nova_fork import errors
from nova_fork import generated
from nova_fork import progress
from nova_fork.proof import prove
from nova_fork.tree import gitutils

STEPS = ('pep8', 'unit', 'functional', 'releasenotes')
# the steps that run stestr: they take a selection, their tests are
# counted and their failures run again on the pristine release
SUITES = ('unit', 'functional')

# nova's local checks put a colon after their code (N375: ...)
_FLAKE8 = re.compile(r'^\S+\.py:\d+:\d+: [A-Z]+\d+:? ', re.M)
_REF = re.compile(r'^\s*:(branch|earliest-version):\s*(\S+)\s*$', re.M)

# subunit statuses, as the tables count them
PASSED = ('success', 'xfail')
SKIPPED = ('skip',)


def note_refs(tree):
    """{kind: [names]}: the branches and tags the release notes name."""
    found = {'branch': set(), 'earliest-version': set()}
    source = pathlib.Path(tree) / 'releasenotes' / 'source'
    for page in source.glob('*.rst'):
        for kind, name in _REF.findall(page.read_text()):
            found[kind].add(name)
    return {kind: sorted(names) for kind, names in found.items()}


def add_note_refs(tree, tag):
    """Make the branches and tags the release notes pages name.

    A tree made from the sdist has the release's import and the fork's
    commits, not upstream's history: reno stops at a page whose branch
    (``:branch:``) or first version (``:earliest-version:``) it cannot
    find.  Each missing one is made at the import of the release, so the
    pages build (with the release's notes) and the unreleased page shows
    the fork's.  Returns the refs made.
    """
    made = []
    for kind, names in note_refs(tree).items():
        prefix = 'refs/heads/' if kind == 'branch' else 'refs/tags/'
        for name in names:
            if gitutils.git(tree, 'rev-parse', '--verify', '-q',
                            prefix + name, check=False).returncode:
                gitutils.git(tree, 'update-ref', prefix + name, tag)
                made.append(name)
    return made


def env_of(step, tox3, unit_env):
    """The tox environment of a step.

    pep8: nova's own pep8 environment runs pre-commit from the newer
    lines on, whose hooks are cloned from github.com and opendev.org; on
    a tox 4 tree the gate runs the hacking hook's check itself, flake8
    with hacking and nova's local checks over the whole tree, through
    nova's fast8 environment with the whole-tree form of its flake8
    wrapper.  A tox 3 tree's pep8 environment is that check already
    (flake8wrap.sh over the whole tree, and the era's JSON checks).

    >>> env_of('pep8', False, 'py3'), env_of('pep8', True, 'py27')
    ('fast8', 'pep8')
    >>> env_of('unit', True, 'py27'), env_of('functional', True, 'py27')
    ('py27', 'functional')
    """
    if step == 'pep8':
        return 'pep8' if tox3 else 'fast8'
    if step == 'unit':
        return unit_env
    return step


def tox_args(step, env, selection=None, load_list=None):
    """The tox command line of a step, with an optional test selection.

    selection: stestr filters (words); load_list: a file of test ids.

    >>> tox_args('functional', 'functional', 'test_pci')
    ['-e', 'functional', '--', 'test_pci']
    >>> tox_args('unit', 'py27', load_list='/t/ids')
    ['-e', 'py27', '--', '--load-list', '/t/ids']
    >>> tox_args('pep8', 'fast8')
    ... # doctest: +NORMALIZE_WHITESPACE
    ['-e', 'fast8', '-x',
     'testenv:fast8.commands=bash tools/flake8wrap.sh']
    """
    args = ['-e', env]
    if env == 'fast8':
        args += ['-x', 'testenv:fast8.commands=bash tools/flake8wrap.sh']
    if selection or load_list:
        if step not in SUITES:
            raise errors.UsageError('the %s step takes no test selection'
                                    % step)
        args += ['--'] + (selection.split() if selection
                          else ['--load-list', str(load_list)])
    return args


def flake8_problems(output):
    """How many flake8 problems (path:line:col: CODE text) a run shows."""
    return len(_FLAKE8.findall(output))


def parse_selections(words):
    """{step: selection} from STEP=TESTS words (--select)."""
    result = {}
    for word in words or ():
        step, sep, selection = word.partition('=')
        if not sep or step not in SUITES or not selection:
            raise errors.UsageError(
                '--select %s: give STEP=TESTS, STEP one of %s' % (
                    word, ', '.join(SUITES)))
        result[step] = selection
    return result


def parse_only(text):
    """The steps --only names, in the gate's order."""
    if not text:
        return list(STEPS)
    wanted = [s.strip() for s in text.split(',') if s.strip()]
    unknown = [s for s in wanted if s not in STEPS]
    if unknown or not wanted:
        raise errors.UsageError('--only %s: the steps are %s' % (
            text, ','.join(STEPS)))
    return [s for s in STEPS if s in wanted]


def duration(seconds):
    """'1 min 05 s' or '42 s'.

    >>> duration(65.2), duration(42)
    ('1 min 05 s', '42 s')
    """
    seconds = int(round(seconds))
    if seconds < 60:
        return '%d s' % seconds
    return '%d min %02d s' % divmod(seconds, 60)


# -- the tests of a run: the subunit streams of the tree's stestr repository

def next_run(tree):
    """The id the tree's stestr repository gives its next run (0: none)."""
    try:
        return int((pathlib.Path(tree) / '.stestr' / 'next-stream')
                   .read_text().strip())
    except (OSError, ValueError):
        return 0


def streams_since(tree, first):
    """The subunit v2 streams of the runs numbered first and later.

    stestr keeps each run as a file named by its id in .stestr/; nova's
    unit environment runs stestr twice, the second run (the profiler
    test) combined into the first.
    """
    folder = pathlib.Path(tree) / '.stestr'
    return b''.join((folder / str(n)).read_bytes()
                    for n in range(first, next_run(tree))
                    if (folder / str(n)).is_file())


def _pythons(tree, env):
    """The tree's tox interpreters, the step's environment's first."""
    tox = pathlib.Path(tree) / '.tox'
    first = tox / env / 'bin' / 'python'
    return [first] + [p for p in sorted(tox.glob('*/bin/python'))
                      if p != first]


def read_stream(tree, env, stream):
    """{test id: status} of a subunit stream.

    Read by subunit itself, with the script prove uses, run by a python
    of the tree's tox environments (stestr's own, which has subunit); the
    last status of a test wins (nova's profiler test is skipped in the
    first run and run in the second).
    """
    if not stream:
        return {}
    for python in _pythons(tree, env):
        if not python.exists():
            continue
        proc = subprocess.run([str(python), str(prove.SUMMARY_SCRIPT)],
                              input=stream, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
        if proc.returncode == 0:
            result = {}
            for line in proc.stdout.decode().splitlines():
                record = json.loads(line)
                if record['status'] != 'exists':
                    result[record['id']] = record['status']
            return result
    raise errors.ForkError(
        'reading the subunit stream of %s in %s: no python of its .tox '
        'has subunit' % (env, tree))


def counts(statuses):
    """{'run', 'passed', 'failed', 'skipped'} of {test id: status}.

    An expected failure counts as passed, an unexpected success (or a
    test that never ended) as failed.

    >>> counts({'a': 'success', 'b': 'fail', 'c': 'skip', 'd': 'xfail'})
    {'run': 4, 'passed': 2, 'failed': 1, 'skipped': 1}
    """
    passed = sum(1 for s in statuses.values() if s in PASSED)
    skipped = sum(1 for s in statuses.values() if s in SKIPPED)
    return {'run': len(statuses), 'passed': passed,
            'failed': len(statuses) - passed - skipped, 'skipped': skipped}


def failed_ids(statuses):
    return sorted(test_id for test_id, status in statuses.items()
                  if status not in PASSED + SKIPPED)


# -- shared or ours

def classify(failed, pristine_statuses):
    """(shared, ours): the fork's failed tests that fail on pristine, not.

    A test the pristine run did not have, or that passed or was skipped
    there, is ours.

    >>> classify(['a', 'b', 'c'], {'a': 'fail', 'b': 'success'})
    (['a'], ['b', 'c'])
    """
    failing = set(failed_ids(pristine_statuses))
    return ([t for t in failed if t in failing],
            [t for t in failed if t not in failing])


def method_of(test_id):
    """The test method's name in a test id.

    >>> method_of('nova.tests.unit.test_a.ATestCase.test_b(scenario)')
    'test_b'
    """
    return test_id.split('(', 1)[0].rsplit('.', 1)[-1]


def upstream_tests(tree, ids):
    """The ids whose test method the release itself defines.

    The tree's first commit is the release's import.  A test the fork
    adds is not there: its failure is ours, whatever the release's code
    does with it.
    """
    release = gitutils.out(tree, 'rev-list', '--max-parents=0',
                           'HEAD').split()[0]
    return [i for i in ids if gitutils.git(
        tree, 'grep', '-q', '-F', 'def %s(' % method_of(i), release,
        '--', 'nova/tests', check=False).returncode == 0]


def has_results(record):
    """True when the step measured something a later run would repeat.

    A suite that ran tests, a pep8 run that finished (clean or with
    findings), a releasenotes build that passed.  A tox that stopped
    before (an install that failed, no network) is not cached: the next
    run tries again.
    """
    if record['step'] in SUITES:
        return bool(record.get('tests', {}).get('run'))
    if record['step'] == 'pep8':
        return record['exit'] == 0 or bool(record.get('findings'))
    return record['exit'] == 0


def failed(record):
    """True when the step fails the gate.

    A suite fails with a failure that is ours or could not be told
    (the pristine run gave no results), or with no results at all; its
    failures that are all upstream's (shared) do not fail it.  The other
    steps fail on a non-zero exit.
    """
    if not record['exit']:
        return False
    if record['step'] not in SUITES or not record.get('failed'):
        return True
    return record.get('shared') is None or bool(record.get('ours'))


def result(record):
    """One word or three for a record: ok, FAILED (...), ok (N shared).

    >>> result({'step': 'unit', 'exit': 1, 'failed': ['a'],
    ...         'shared': ['a'], 'ours': []})
    'ok (1 shared)'
    >>> result({'step': 'unit', 'exit': 1, 'failed': ['a', 'b'],
    ...         'shared': ['a'], 'ours': ['b']})
    'FAILED (1 ours)'
    >>> result({'step': 'pep8', 'exit': 1})
    'FAILED (exit 1)'
    """
    if not record['exit']:
        return 'ok'
    if record['step'] in SUITES and record.get('failed'):
        if record.get('shared') is None:
            return 'FAILED (not told)'
        if record.get('ours'):
            return 'FAILED (%d ours)' % len(record['ours'])
        return 'ok (%d shared)' % len(record['shared'])
    return 'FAILED (exit %d)' % record['exit']


# -- the cache

def cache_key(head, lock_text, step, env, selection=None, ids=None):
    """The key of a step's record: prove's, with the step's filters.

    >>> a = cache_key('c0ffee', 'six==1\\n', 'unit', 'py27')
    >>> a == cache_key('c0ffee', 'six==1\\n', 'unit', 'py27'), len(a)
    (True, 20)
    >>> len({a, cache_key('c0ffee', 'six==1\\n', 'unit', 'py3'),
    ...      cache_key('c0ffee', 'six==1\\n', 'functional', 'py27'),
    ...      cache_key('c0ffee', 'six==1\\n', 'unit', 'py27', 'x'),
    ...      cache_key('c0ffee', 'six==1\\n', 'unit', 'py27', ids=['x'])})
    5
    """
    filters = ['gate', step, env]
    if selection:
        filters += ['select', selection]
    if ids:
        filters += ['ids'] + sorted(ids)
    return prove.cache_key(head, lock_text, filters)


def cache_dir(root):
    return prove.cache_dir(root) / 'gate'


# what tox's develop install of nova writes over the sdist's own copies
BUILT = ('*.egg-info/**', 'AUTHORS', 'ChangeLog')


def tree_head(tree):
    """The git tree of the tree's commit, or None when its tracked files
    differ from it.

    What a suite runs is the files, not the commit's message: a backport
    whose "(cherry picked from commit X)" lines changed, as they do down
    the chain whenever a line above changes, keeps its records.  The
    records of a tree with changes would not be its commit's: such a run
    is not cached.  The files a develop install writes (the sdist's
    nova.egg-info, pbr's AUTHORS and ChangeLog) are not changes.
    """
    changed = gitutils.git(
        tree, 'status', '--porcelain', '--untracked-files=no', '--', '.',
        *[':(exclude,glob)**/%s' % name for name in BUILT]).stdout.strip()
    if changed:
        return None
    return gitutils.git(tree, 'rev-parse', 'HEAD^{tree}').stdout.strip()


class Tree(object):
    """A prepared tree of a line, and where its records are cached."""

    def __init__(self, base, prepared, pristine):
        self.base = base
        self.prepared = prepared
        self.pristine = pristine
        self.head = tree_head(prepared.tree)
        self.lock_text = base.lock.read_text()
        if self.head is None:
            progress.say('gate: %s has uncommitted changes: its results '
                         'are not cached' % self.where, once=True)

    @property
    def where(self):
        return progress.where(self.prepared.tree, self.base.root)

    def env(self, step):
        return env_of(step, bool(self.prepared.tox3),
                      self.prepared.unit_env)

    def path(self, step, selection=None, ids=None):
        if self.head is None:
            return None
        return cache_dir(self.base.root) / ('%s.json' % cache_key(
            self.head, self.lock_text, step, self.env(step), selection,
            ids))

    def cached(self, step, selection=None, ids=None):
        path = self.path(step, selection, ids)
        if path is not None and path.is_file():
            return json.loads(path.read_text())
        return None

    def store(self, record):
        path = self.path(record['step'], record.get('selection'),
                         record.get('ids'))
        if path is not None and has_results(record):
            prove.store(path, record)


def run_step(tree, step, selection=None, ids=None, commit=None):
    """Run a step in the tree; its record (not cached yet)."""
    base, prepared = tree.base, tree.prepared
    env = tree.env(step)
    if step == 'releasenotes':
        made = add_note_refs(prepared.tree, base.nova)
        if made:
            print('refs the release notes name, made at %s: %s' % (
                base.nova, ', '.join(made)), flush=True)
    with tempfile.TemporaryDirectory(prefix='nova-fork-gate-') as tmp:
        load_list = None
        if ids:
            load_list = pathlib.Path(tmp) / 'ids'
            load_list.write_text(''.join(i + '\n' for i in ids))
        first = next_run(prepared.tree)
        start = time.monotonic()
        code, output = novatox.run(
            base, tox_args(step, env, selection, load_list),
            prepared=prepared, capture=True)
        seconds = time.monotonic() - start
    record = {
        'line': base.series, 'release': base.nova,
        'pristine': tree.pristine, 'tree': tree.where, 'head': tree.head,
        'step': step, 'env': env, 'tox': prepared.tox,
        'selection': selection, 'ids': sorted(ids) if ids else None,
        'exit': code, 'seconds': round(seconds, 1),
        'load': round(os.getloadavg()[2], 2),
        'date': time.strftime('%Y-%m-%d'), 'finished': time.time(),
        'commit': commit or generated.commit_of(base.root),
    }
    if step in SUITES:
        statuses = read_stream(prepared.tree, env, streams_since(
            prepared.tree, first))
        record['tests'] = counts(statuses)
        record['failed'] = failed_ids(statuses)
        if ids:
            # the pristine run of the fork's failures: their statuses
            record['statuses'] = statuses
    elif step == 'pep8':
        record['findings'] = flake8_problems(output)
    return record


def step_record(tree, step, selection=None, ids=None, commit=None):
    """The step's record: cached, or run now and cached; (record, cached)."""
    record = tree.cached(step, selection, ids)
    if record is not None:
        progress.say('gate: %s, %s (%s): %s, cached' % (
            tree.where, step, record['env'], result(record)))
        return record, True
    print('== gate %s%s: %s (%s)' % (
        tree.base.series, ' (pristine)' if tree.pristine else '', step,
        tree.env(step)), flush=True)
    record = run_step(tree, step, selection, ids, commit)
    tree.store(record)
    return record, False


def tell(fork, record, release_tree):
    """Run the record's failed tests on the release; classify.

    release_tree: a function that gives the release's Tree (built on
    first use).  The record gets ``shared`` and ``ours`` (None when the
    release's run gave no results) and is cached again.  Only the tests
    the release has run there; the others are ours.
    """
    if not record.get('failed') or record.get('shared') is not None:
        return record
    ids = upstream_tests(fork.prepared.tree, record['failed'])
    statuses = {}
    if ids:
        release, _ = step_record(release_tree(), record['step'], ids=ids,
                                 commit=record['commit'])
        record['pristine_exit'] = release['exit']
        ran = release.get('tests', {}).get('run')
        statuses = release['statuses'] if ran else None
    if statuses is None:
        record['shared'] = record['ours'] = None
    else:
        record['shared'], record['ours'] = classify(record['failed'],
                                                    statuses)
    fork.store(record)
    return record


def gate(base, steps, selections=None, pristine=False, commit=None):
    """Run (or read from the cache) the steps in the line's tree.

    Returns [(record, cached)] in the steps' order.  On the fork, the
    failures of each suite are run again on the pristine release.
    """
    selections = selections or {}
    tree = Tree(base, novatox.prepare(base, pristine), pristine)
    other = []

    def release_tree():
        if not other:
            other.append(Tree(base, novatox.prepare(base, release=True),
                              True))
        return other[0]

    done = []
    for step in steps:
        record, cached = step_record(tree, step, selections.get(step),
                                     commit=commit)
        if not pristine and step in SUITES:
            record = tell(tree, record, release_tree)
        done.append((record, cached))
    return done


HEADER = ['step', 'tox env', 'result', 'run', 'passed', 'failed', 'skipped',
          'shared', 'ours', 'time']


def row(record, cached=False):
    """One row of a run's table.

    >>> row({'step': 'unit', 'env': 'py27', 'exit': 0, 'selection': 'x',
    ...      'tests': {'run': 3, 'passed': 3, 'failed': 0, 'skipped': 0},
    ...      'failed': [], 'seconds': 65.2}, cached=True)
    ... # doctest: +NORMALIZE_WHITESPACE
    ['unit', 'py27 (selection)', 'ok', '3', '3', '0', '0', '-', '-',
     '1 min 05 s (cached)']
    """
    env = record['env'] + (' (selection)' if record.get('selection') else '')
    cells = [record['step'], env, result(record)]
    tests = record.get('tests')
    if tests and tests['run']:
        cells += [str(tests[k]) for k in ('run', 'passed', 'failed',
                                          'skipped')]
        told = record.get('shared') is not None
        cells += [str(len(record['shared'])) if told else '-',
                  str(len(record['ours'])) if told else '-']
    elif record['step'] == 'pep8':
        cells += ['-', '-', str(record.get('findings', 0)), '-', '-', '-']
    else:
        cells += ['-'] * 6
    return cells + [duration(record['seconds']) +
                    (' (cached)' if cached else '')]


def render(rows, header=HEADER):
    """The table, as plain columns."""
    table = [header] + rows
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    lines = ['  '.join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
             for r in table]
    lines.insert(1, '  '.join('-' * w for w in widths))
    return '\n'.join(lines)
