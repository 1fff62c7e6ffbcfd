"""Each commit of a review series, gated alone, as Zuul gates a change.

Zuul tests every change of a series on its own, on top of the changes
before it: so every commit must pass nova's style checks and its own
tests by itself.  For each commit of the series, checked out alone in the
series' scratch clone, this runs:

* ``pep8``: flake8 with the tree's configuration (hacking and nova's local
  checks) over the Python files the commit touches;
* ``unit``: the unit test modules the commit touches, and those of the
  packages whose modules it changes: for ``nova/X/Y.py`` every
  ``nova/tests/unit/X/test_*.py``, as nova does not name its tests after
  one module (``nova/compute/manager.py`` is tested by
  ``test_compute_mgr.py`` and ``test_compute.py`` both);
* ``reproducer``: the functional test modules the series adds, at every
  commit: they pass before the fixes (asserting the bug) and after them
  (asserting the fixed behaviour).
"""

import dataclasses
import pathlib
import subprocess

from nova_fork.env import runner
from nova_fork.env import runtime
from nova_fork.env import venv
from nova_fork.proof import prove
from nova_fork.tree import gitutils

CHECKS = ('pep8', 'unit', 'reproducer')
NONE = '-'
UNIT_ROOT = 'nova/tests/unit/'
FUNCTIONAL_ROOT = 'nova/tests/functional/'


@dataclasses.dataclass
class Cell:
    """One check of one commit: passed or not, and what it says."""

    ok: bool
    text: str


def module_name(path):
    """The dotted module of a .py path.

    >>> module_name('nova/tests/unit/pci/test_manager.py')
    'nova.tests.unit.pci.test_manager'
    """
    return path[:-len('.py')].replace('/', '.')


def unit_modules(tree, files):
    """The unit test modules that test what files touch, sorted.

    >>> import pathlib, tempfile
    >>> tree = pathlib.Path(tempfile.mkdtemp())
    >>> unit = tree / 'nova/tests/unit'
    >>> for name in ('pci/test_manager.py', 'pci/test_stats.py',
    ...              'pci/fakes.py', 'compute/test_compute.py',
    ...              'compute/test_compute_mgr.py',
    ...              'compute/monitors/test_monitors.py'):
    ...     (unit / name).parent.mkdir(parents=True, exist_ok=True)
    ...     _ = (unit / name).write_text('')
    >>> unit_modules(tree, ['nova/pci/manager.py',
    ...                     'releasenotes/notes/a.yaml'])
    ['nova.tests.unit.pci.test_manager', 'nova.tests.unit.pci.test_stats']
    >>> unit_modules(tree, ['nova/compute/manager.py',
    ...                     'nova/tests/unit/pci/test_stats.py'])
    ... # doctest: +NORMALIZE_WHITESPACE
    ['nova.tests.unit.compute.test_compute',
     'nova.tests.unit.compute.test_compute_mgr',
     'nova.tests.unit.pci.test_stats']
    """
    found = set()
    for path in files:
        if not path.endswith('.py') or not path.startswith('nova/'):
            continue
        if path.startswith(UNIT_ROOT):
            if pathlib.PurePath(path).name.startswith('test_'):
                found.add(module_name(path))
            continue
        if path.startswith('nova/tests/'):
            continue
        package = pathlib.PurePath(path[len('nova/'):]).parent
        for test in (tree / UNIT_ROOT / package).glob('test_*.py'):
            found.add(module_name(test.relative_to(tree).as_posix()))
    return sorted(found)


def reproducer_modules(tree, shas):
    """The functional test modules the commits add, sorted."""
    added = set()
    for sha in shas:
        added.update(gitutils.out(
            tree, 'diff-tree', '--no-commit-id', '--name-only', '-r',
            '--diff-filter=A', sha).split())
    return sorted(module_name(p) for p in added
                  if p.startswith(FUNCTIONAL_ROOT) and p.endswith('.py') and
                  pathlib.PurePath(p).name.startswith('test_'))


def touched(tree, sha):
    """The files the commit adds or changes (not those it deletes)."""
    return gitutils.out(tree, 'diff-tree', '--no-commit-id', '--name-only',
                        '-r', '--diff-filter=d', sha).split()


def _lint(base, tree, files):
    files = [f for f in files if f.endswith('.py')]
    if not files:
        return Cell(True, NONE)
    python = venv.ensure(base)
    proc = runtime.run(base, [str(python), '-m', 'flake8'] + files, cwd=tree,
                       env=runner.environ(python, base.setenv),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if proc.returncode:
        found = proc.stdout.decode(errors='replace').strip().splitlines()
        return Cell(False, '%d finding(s): %s' % (len(found), found[0]))
    return Cell(True, 'ok, %d file(s)' % len(files))


def _tests(base, tree, modules, path):
    if not modules:
        return Cell(True, NONE)
    python = venv.ensure(base)
    regex = '|'.join('^%s\\.' % m.replace('.', '\\.') for m in modules)
    proc = runner.stestr(base, tree, ['run', '--subunit', regex], path=path,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    # one record a test: its last (stestr also reports it in progress)
    records = list({r['id']: r for r in prove._summary(
        base, python, tree, proc.stdout)}.values())
    failed = [r['id'] for r in records
              if r['status'] not in ('success', 'skip')]
    if not records:
        return Cell(False, 'no test ran (stestr exit %d)' % proc.returncode)
    if failed or proc.returncode:
        return Cell(False, '%d of %d failed: %s' % (
            len(failed), len(records),
            '.'.join(failed[0].rsplit('.', 2)[-2:]) if failed
            else 'stestr error'))
    return Cell(True, '%d pass' % len(records))


def gate(base, work, tag):
    """Check each commit of work since tag alone; [(subject, {check: Cell})].

    work is a clone whose HEAD is the series; it is left on HEAD.
    """
    shas = gitutils.out(work, 'rev-list', '--reverse',
                        '%s..HEAD' % tag).split()
    head = gitutils.out(work, 'rev-parse', 'HEAD')
    reproducers = reproducer_modules(work, shas)
    rows = []
    try:
        for sha in shas:
            gitutils.git(work, 'checkout', '-q', '--detach', sha)
            files = touched(work, sha)
            subject = gitutils.out(work, 'show', '-s', '--format=%s', sha)
            rows.append((subject, {
                'pep8': _lint(base, work, files),
                'unit': _tests(base, work, unit_modules(work, files),
                               'unit'),
                'reproducer': _tests(
                    base, work,
                    [m for m in reproducers
                     if (work / (m.replace('.', '/') + '.py')).is_file()],
                    'functional'),
            }))
    finally:
        gitutils.git(work, 'checkout', '-q', '--detach', head)
    return rows


def failed(rows):
    """The (commit number, check) of every failed cell."""
    return [(n, check) for n, (_, cells) in enumerate(rows, start=1)
            for check in CHECKS if not cells[check].ok]


def render(rows, added=None):
    """An RST simple table: a commit a row, a check a column.

    added: the lines each commit adds, a column of its own if given.

    >>> print(render([('Fix it', {'pep8': Cell(True, 'ok, 1 file(s)'),
    ...                          'unit': Cell(False, '1 of 2 failed: x'),
    ...                          'reproducer': Cell(True, '2 pass')})], [7]))
    =  ======  =====  =============  ======================  ==========
    #  commit  added  pep8           unit                    reproducer
    =  ======  =====  =============  ======================  ==========
    1  Fix it  7      ok, 1 file(s)  FAIL: 1 of 2 failed: x  2 pass
    =  ======  =====  =============  ======================  ==========
    """
    header = ['#', 'commit'] + (['added'] if added else []) + list(CHECKS)
    body = [[str(n), subject] + ([str(added[n - 1])] if added else []) + [
        cells[c].text if cells[c].ok else 'FAIL: %s' % cells[c].text
        for c in CHECKS] for n, (subject, cells) in enumerate(rows, start=1)]
    widths = [max(len(r[i]) for r in [header] + body)
              for i in range(len(header))]
    rule = '  '.join('=' * w for w in widths)
    fmt = '  '.join('%%-%ds' % w for w in widths)
    lines = [rule, (fmt % tuple(header)).rstrip(), rule]
    lines += [(fmt % tuple(r)).rstrip() for r in body]
    lines.append(rule)
    return '\n'.join(lines)
