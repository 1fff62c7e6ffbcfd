"""Every final release of the lines' series: does its series apply?

For each final release on the index from FIRST to LAST, the line of its
series (by major version) builds the fork on it (the release pinned as
``--release`` pins it), which ``git am``s the line's commits of the units
it lacks (with a 3-way merge where their context moved), and exports it:
the release's own series, ``git am`` onto the pristine release again,
and ``quilt push`` for the lines with a quilt series.  A row a release:
its line, the units it lacks, whether each step applies, and what to do
where one does not.  A release whose tree conflicts with a commit of its
line takes its own backport of it (config.Base.release_dir).

The sweep chooses, for each line, the release of its series furthest from
the line's own (the oldest that applies) and, with ``reproduce``, shows
the bug there: the regression tests fail on it and pass on its fork.

``inc`` writes the table as the RST fragment doc/source/lines.rst
includes, with the date and the project's commit.
"""

import dataclasses
import shutil

from nova_fork import config
from nova_fork.dist import export
from nova_fork import errors
from nova_fork import facts
from nova_fork import progress
from nova_fork.proof import matrix
from nova_fork.proof import prove
from nova_fork.tree import build
from nova_fork.tree import fetch
from nova_fork.tree import index
from nova_fork.tree import pins

FIRST, LAST = '18.0.2', '34.0.0'
INC = matrix.INC.with_name('sweep.inc')
OK, FAILS, NONE, THREE_WAY, OWN = 'ok', 'fails', '-', '3-way', 'backport'


@dataclasses.dataclass
class Row:
    release: str
    line: str
    lacks: tuple = ()
    am: str = NONE
    quilt: str = NONE
    todo: str = ''
    reproduce: str = NONE

    @property
    def applies(self):
        """The series for the release applies (its own, where moved)."""
        return FAILS not in (self.am, self.quilt)

    @property
    def unchanged(self):
        """The line's series applies as it is."""
        return self.applies and self.am == OK


def releases(root, first=FIRST, last=LAST):
    """[(release, its line's Base)], oldest first, from the index."""
    lines = {int(b.default_nova.split('.')[0]): b
             for b in config.load_bases(root).values()}
    low, high = facts.version_key(first), facts.version_key(last)
    return [(v, lines[facts.version_key(v)[0]])
            for v in index.finals(index.read())
            if low <= facts.version_key(v) <= high and
            facts.version_key(v)[0] in lines]


def sweep_one(line, version):
    """The row of one release; its trees are removed unless listed."""
    base = pins.on_release(line, version)
    row = Row(version, line.series)
    listed = version in line.listed
    try:
        sdist = fetch.fetch(base.root, version, base.sha256)
        row.lacks = tuple(build.lacking_units(base, sdist))
        if not row.lacks:
            row.todo = 'has every unit: nothing to ship'
            return row
        try:
            tree = build.build(base)
        except errors.PatchError as exc:
            row.am, row.todo = FAILS, str(exc)
            return row
        moved = [m.split(':')[0] for m in build.three_way(tree)]
        own = [c.name for c in base.commits(check_files=False)
               if base.is_own(c)]
        todo = []
        if own:
            todo.append('its own backport of %s, in %s' % (
                ', '.join(own), base.release_dir.relative_to(base.root)))
        if moved:
            todo.append('context moved in %s' % ', '.join(moved))
        if todo:
            row.todo = '%s: the release\'s own series, nova-fork export %s '\
                '--release %s' % ('; '.join(todo), line.series, version)
        applied = OWN if own else THREE_WAY if moved else OK
        try:
            export.export(base, quilt_only=[version])
        except errors.PatchError as exc:
            quilt = 'quilt' in str(exc)
            row.am = applied if quilt else FAILS
            row.quilt = FAILS if quilt else NONE
            row.todo = str(exc)
            return row
        row.am = applied
        row.quilt = OK if base.quilt else NONE
        return row
    finally:
        if not listed:
            remove_trees(base)


def remove_trees(base):
    """The trees and export of a release bases.ini does not list."""
    for tree in build.build_dir(base.root).glob(base.label + '*'):
        if tree.name == base.label or tree.name.startswith(
                base.label + '-'):
            shutil.rmtree(tree, ignore_errors=True)
    shutil.rmtree(export.dist_dir(base.root, base.label),
                  ignore_errors=True)


def chosen(rows, root):
    """{line: release}: the oldest release each line's series applies to.

    The release furthest from the line's own, where the bug is shown
    (reproduce_one); a line whose series has no other release has none.
    """
    bases = config.load_bases(root)
    result = {}
    for row in rows:
        if (row.applies and row.lacks and row.line not in result and
                row.release != bases[row.line].default_nova):
            result[row.line] = row.release
    return result


def reproduce_one(line, version):
    """'ok', or why the regression tests do not show the bug there."""
    base = pins.on_release(line, version)
    try:
        _, rows, _ = prove.table(base, mutants=False)
        problems = prove.reproduce_problems(base, rows, prove.lacking(base))
    except errors.ForkError as exc:
        problems = [str(exc)]
    finally:
        if version not in line.listed:
            remove_trees(base)
    return 'fails: %s' % problems[0] if problems else OK


def sweep(root, first=FIRST, last=LAST, reproduce=False):
    """The rows of every release from FIRST to LAST.

    reproduce: show the bug on the release chosen for each line.
    """
    rows = []
    for version, line in releases(root, first, last):
        step = progress.Step()
        row = sweep_one(line, version)
        step.done('sweep: nova %s (%s): git am %s, quilt %s' % (
            version, line.series, row.am, row.quilt))
        rows.append(row)
    if reproduce:
        bases = config.load_bases(root)
        by_release = {r.release: r for r in rows}
        for series, version in chosen(rows, root).items():
            step = progress.Step()
            row = by_release[version]
            row.reproduce = reproduce_one(bases[series], version)
            step.done('sweep: reproduce %s --release %s: %s' % (
                series, version, row.reproduce))
    return rows


def table(rows):
    head = ['release', 'line', 'lacks', 'the line\'s commits', 'quilt push',
            'reproduce', 'what to do']
    body = [[r.release, r.line, ', '.join(r.lacks) or 'nothing', r.am,
             r.quilt, r.reproduce, r.todo or NONE] for r in rows]
    return [head] + body


def summary(rows):
    """One sentence: how many releases, how many apply unchanged."""
    shipped = [r for r in rows if r.lacks]
    unchanged = [r for r in shipped if r.unchanged]
    moved = [r for r in shipped if r.am == THREE_WAY and r.applies]
    own = [r for r in shipped if r.am == OWN and r.applies]
    failing = [r for r in shipped if not r.applies]
    shown = [r for r in rows if r.reproduce != NONE]
    text = ('%d releases; %d lack units of the fix: the series of their '
            'line applies unchanged to %d, with a 3-way merge (context '
            'moved) to %d, with a backport of their own to %d, and not to '
            '%d' % (len(rows), len(shipped), len(unchanged), len(moved),
                    len(own), len(failing)))
    if shown:
        text += ('; the regression tests show the bug on %d of the %d '
                 'releases chosen for it' % (
                     len([r for r in shown if r.reproduce == OK]),
                     len(shown)))
    return text


def inc(rows, date, commit, seconds):
    """The RST fragment of a sweep of every release."""
    return '\n'.join([
        '.. Written by nova-fork sweep, which writes it when it sweeps '
        'every',
        '   release from %s to %s; do not edit it by hand.' % (FIRST, LAST),
        '',
        'Measured on %s at commit ``%s`` of the project, with ``nova-fork '
        'sweep``' % (date, commit),
        '(%s): %s.' % (matrix.minutes(seconds), summary(rows)),
        '',
        matrix.render(table(rows)),
        '']) + '\n'
