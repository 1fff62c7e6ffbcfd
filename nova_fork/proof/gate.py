"""Nova's gate on a fork tree, through the tree's own tox.ini.

``nova-fork gate LINE`` runs, in build/LINE (or the pristine release's
tree with --pristine), the tox environments that nova's check jobs run:
flake8 with nova's hacking checks over the whole tree, the unit suite,
the functional suite and the release notes build; and prints a table of
each step's result, stestr's counts and its time.
"""

import pathlib
import re
import time

from nova_fork.env import novatox
from nova_fork import errors
from nova_fork.tree import gitutils

# step: (tox environment, arguments for it, takes a test selection)
#
# pep8: nova's own pep8 environment runs pre-commit, whose hooks are
# cloned from github.com and opendev.org; the gate runs the hacking hook's
# check itself, flake8 with hacking (as test-requirements.txt pins it)
# and nova's local checks over the whole tree, through nova's fast8
# environment with the whole-tree form of its flake8 wrapper.
STEPS = {
    'pep8': ('fast8', ['-x', 'testenv:fast8.commands=bash '
                       'tools/flake8wrap.sh'], False),
    'py3': ('py3', [], True),
    'functional': ('functional', [], True),
    'releasenotes': ('releasenotes', [], False),
}

_TOTAL = re.compile(r'^ - (Passed|Failed|Skipped|Expected Fail|'
                    r'Unexpected Success): (\d+)\s*$', re.M)
# nova's local checks put a colon after their code (N375: ...)
_FLAKE8 = re.compile(r'^\S+\.py:\d+:\d+: [A-Z]+\d+:? ', re.M)


_REF = re.compile(r'^\s*:(branch|earliest-version):\s*(\S+)\s*$', re.M)


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


def tox_args(step, selection=None):
    """The tox command line of a step, with an optional test selection.

    >>> tox_args('functional', 'test_pci')
    ['-e', 'functional', '--', 'test_pci']
    >>> tox_args('releasenotes')
    ['-e', 'releasenotes']
    """
    env, extra, selectable = STEPS[step]
    args = ['-e', env] + list(extra)
    if selection:
        if not selectable:
            raise errors.UsageError('the %s step takes no test selection'
                                    % step)
        args += ['--'] + selection.split()
    return args


def counts(output):
    """stestr's totals in a tox run's output, summed over its runs.

    nova's py3 environment runs stestr twice (the second run, the
    profiler test, combined into the first), so every "Totals" block
    counts.  None when stestr printed none (it did not run, or could not
    discover the tests).  An expected failure counts as passed, an
    unexpected success as failed.
    """
    found = _TOTAL.findall(output)
    if not found:
        return None
    total = {'passed': 0, 'failed': 0, 'skipped': 0}
    for label, number in found:
        key = {'Passed': 'passed', 'Expected Fail': 'passed',
               'Skipped': 'skipped'}.get(label, 'failed')
        total[key] += int(number)
    return total


def flake8_problems(output):
    """How many flake8 problems (path:line:col: CODE text) a run shows."""
    return len(_FLAKE8.findall(output))


def parse_selections(words):
    """{step: selection} from STEP=REGEX words (--select)."""
    result = {}
    for word in words or ():
        step, sep, selection = word.partition('=')
        if not sep or step not in STEPS or not selection:
            raise errors.UsageError(
                '--select %s: give STEP=TESTS, STEP one of %s' % (
                    word, ', '.join(s for s in STEPS if STEPS[s][2])))
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


def _duration(seconds):
    """'1 min 05 s' or '42 s'.

    >>> _duration(65.2), _duration(42)
    ('1 min 05 s', '42 s')
    """
    seconds = int(round(seconds))
    if seconds < 60:
        return '%d s' % seconds
    return '%d min %02d s' % divmod(seconds, 60)


def row(step, code, output, seconds, selection=None):
    """One row of the table: step, env, result, counts, time."""
    env = STEPS[step][0]
    found = counts(output) if STEPS[step][2] else None
    cells = [step, env + (' (selection)' if selection else ''),
             'ok' if code == 0 else 'FAILED (exit %d)' % code]
    if found:
        cells += [str(found['passed']), str(found['failed']),
                  str(found['skipped'])]
    elif step == 'pep8':
        cells += ['-', str(flake8_problems(output)), '-']
    else:
        cells += ['-', '-', '-']
    return cells + [_duration(seconds)]


HEADER = ['step', 'tox env', 'result', 'passed', 'failed', 'skipped', 'time']


def render(rows):
    """The table, as plain columns."""
    table = [HEADER] + rows
    widths = [max(len(r[i]) for r in table) for i in range(len(HEADER))]
    lines = ['  '.join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
             for r in table]
    lines.insert(1, '  '.join('-' * w for w in widths))
    return '\n'.join(lines)


def gate(base, steps, selections=None, pristine=False):
    """Run the steps in the line's tree; (rows, failed steps)."""
    selections = selections or {}
    prepared = novatox.prepare(base, pristine)
    rows, failed = [], []
    for step in steps:
        print('== gate %s%s: %s' % (base.series,
                                    ' (pristine)' if pristine else '', step),
              flush=True)
        if step == 'releasenotes':
            made = add_note_refs(prepared[0], base.nova)
            if made:
                print('refs the release notes name, made at %s: %s' % (
                    base.nova, ', '.join(made)), flush=True)
        start = time.monotonic()
        code, output = novatox.run(
            base, tox_args(step, selections.get(step)), prepared=prepared,
            capture=True)
        rows.append(row(step, code, output, time.monotonic() - start,
                        selections.get(step)))
        if code:
            failed.append(step)
    return rows, failed
