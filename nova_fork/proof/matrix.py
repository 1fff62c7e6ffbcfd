"""The whole proof table: every line, pristine, fork and without each unit.

One row a line: how many regression tests fail for the bug on the
pristine release, on the fork and on the fork without each unit of the
fix the release lacks, and whether the line's reproduce and mutants
proofs hold.  The runs are prove's, cached by tree, so a line already
proven is not run again.
"""

from nova_fork import config
from nova_fork.proof import prove

NONE = '-'


def unit_of(column):
    """The unit a "without UNIT ..." column leaves out, or None."""
    if not column.startswith('without '):
        return None
    return column.split()[1]


def cell(rows, column):
    """"N of M fail" for the bug, "M pass", or what else happened."""
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


def line_row(base, units):
    """(row of cells, [problem]) for one line, running what it needs."""
    lacking = prove.lacking(base)
    columns, rows = prove.table(base)
    problems = (prove.reproduce_problems(base, rows, lacking) +
                prove.mutant_problems(base, columns, rows))
    by_unit = {unit_of(c): c for c in columns if unit_of(c)}
    row = [base.series, base.nova, cell(rows, 'pristine'),
           cell(rows, 'fork')]
    row += [cell(rows, by_unit[u]) if u in by_unit else NONE for u in units]
    row.append('ok' if not problems else '%d problem(s)' % len(problems))
    return row, problems


def header(units):
    return ['line', 'nova', 'pristine', 'fork'] + [
        'without %s' % u for u in units] + ['proofs']


def matrix(root, lines=None, release=None):
    """[header, row, ...] and {line: [problem]} for the lines named."""
    bases = config.load_bases(root)
    units = list(config.load_units(root))
    table = [header(units)]
    problems = {}
    for name in lines or list(bases):
        base = config.get_base(root, name).for_release(release)
        row, found = line_row(base, units)
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
