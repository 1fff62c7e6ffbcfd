"""The whole proof table: every line, pristine, fork and without each unit.

One row a line: how many regression tests fail for the bug on the
pristine release, on the fork and on the fork without each unit of the
fix the release lacks (of the tests the units left out affect: the tests
that tree runs), and whether the line's reproduce and mutants proofs
hold.  The runs are prove's, cached by tree, lock and selection, so a
line already proven is not run again; the row says so.

``inc`` writes the table as the RST fragment that doc/source/matrix.rst
includes, with the date, the project's commit and the time it took.
"""

from nova_fork import config
from nova_fork import generated
from nova_fork.proof import prove

NONE = '-'
# the fragment doc/source/matrix.rst includes, relative to the project
INC = generated.FOLDER / 'matrix.inc'
CACHED = 'cached'


def unit_of(column):
    """The unit a "without UNIT ..." column leaves out, or None."""
    if not column.startswith('without '):
        return None
    return column.split()[1]


def cell(rows, column):
    """"N of M fail" for the bug, "M pass", or what else happened.

    M is the tests the column ran: all of them on the pristine release
    and the fork, those the units left out affect without a unit.
    """
    outcomes = [cells[column][1] for cells in rows.values()
                if column in cells]
    if not outcomes:
        return NONE
    bug = sum(1 for o in outcomes if prove.is_bug_failure(o))
    other = sum(1 for o in outcomes
                if o != prove.PASS and not prove.is_bug_failure(o))
    if not bug and not other:
        return '%d pass' % len(outcomes)
    text = '%d of %d fail' % (bug, len(outcomes)) if bug else ''
    if other:
        text += '%s%d other' % (', ' if text else '', other)
    return text


def minutes(seconds):
    """Elapsed time as the tables give it.

    >>> minutes(125.0), minutes(2460), minutes(20)
    ('2.1 min', '41 min', '0.3 min')
    """
    value = seconds / 60.0
    return '%.0f min' % value if value >= 10 else '%.1f min' % value


def results_cell(runs):
    """Where a row's results came from: run now, or the cache.

    The time is the wall time of its stestr runs (side by side with
    other lines' runs, when several run at once).

    >>> from nova_fork.proof.prove import Run
    >>> runs = [Run(None, c, None, seconds=s)
    ...         for c, s in (('pristine', 75.0), ('fork', 50.0))]
    >>> results_cell(runs)
    'ran, 2.1 min'
    >>> results_cell([Run(None, 'fork', None, cached=True)])
    'cached'
    >>> results_cell(runs + [Run(None, 'without a', None, cached=True)])
    '1 of 3 cached, 2.1 min'
    """
    cached = [run for run in runs if run.cached]
    seconds = sum(run.seconds for run in runs if not run.cached)
    if len(cached) == len(runs):
        return CACHED
    if not cached:
        return 'ran, %s' % minutes(seconds)
    return '%d of %d %s, %s' % (len(cached), len(runs), CACHED,
                                minutes(seconds))


def line_row(base, units, lacking, runs):
    """(row of cells, [problem]) for one line, from its done runs."""
    columns = [run.column for run in runs]
    rows = prove.rows_of(base, runs)
    problems = (prove.reproduce_problems(base, rows, lacking) +
                prove.mutant_problems(base, columns, rows))
    by_unit = {unit_of(c): c for c in columns if unit_of(c)}
    row = [base.series, base.nova, cell(rows, 'pristine'),
           cell(rows, 'fork')]
    row += [cell(rows, by_unit[u]) if u in by_unit else NONE for u in units]
    row.append('ok' if not problems else '%d problem(s)' % len(problems))
    row.append(results_cell(runs))
    return row, problems


def header(units):
    return ['line', 'nova', 'pristine', 'fork'] + [
        'without %s' % u for u in units] + ['proofs', 'results']


def matrix(root, lines=None, release=None, jobs=None):
    """[header, row, ...] and {line: [problem]} for the lines named.

    The trees of each line are built, and its runs not cached yet start
    (prove.Pool: several at once), while the next line's trees are built.
    """
    bases = config.load_bases(root)
    units = list(config.load_units(root))
    lines_runs = []
    with prove.Pool(jobs) as pool:
        for name in lines or list(bases):
            base = config.get_base(root, name).for_release(release)
            lacking = prove.lacking(base)
            runs = prove.plan(base, lacks=lacking)
            pool.add(runs)
            lines_runs.append((base, lacking, runs))
    table = [header(units)]
    problems = {}
    for base, lacking, runs in lines_runs:
        row, found = line_row(base, units, lacking, runs)
        table.append(row)
        if found:
            problems[base.label] = found
    return table, problems


def render(table):
    """An RST simple table."""
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    rule = '  '.join('=' * w for w in widths)
    fmt = '  '.join('%%-%ds' % w for w in widths)
    lines = [rule, (fmt % tuple(table[0])).rstrip(), rule]
    lines += [(fmt % tuple(r)).rstrip() for r in table[1:]]
    lines.append(rule)
    return '\n'.join(lines)


def inc(table, problems, date, commit, seconds, cores, load):
    """The RST fragment of a run of every line, for doc/source/matrix.rst.

    Nothing in it changes from one run to the same results but the date,
    the commit, the times and the load.
    """
    text = [
        '.. Written by nova-fork matrix (tox -e matrix), which writes it '
        'when it',
        '   runs every line of bases.ini; do not edit it by hand.',
        '',
        'Measured on %s at commit ``%s`` of the project, with ``tox -e '
        'matrix``' % (date, commit),
        '(``nova-fork matrix``): %s on %d core%s, load average %.1f.' % (
            minutes(seconds), cores, '' if cores == 1 else 's', load),
        '',
        render(table),
        '',
    ]
    if not problems:
        text.append('Both proofs hold on every line.')
    else:
        text.append('Problems (the command exited 7)::')
        text.append('')
        for label, found in sorted(problems.items()):
            for problem in found:
                text.append('    %s: %s' % (label, problem))
    return '\n'.join(text) + '\n'
