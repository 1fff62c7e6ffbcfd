"""The gate's table for the docs: every line's suites, from the cache.

A row for each line of bases.ini and each suite (unit, functional): the
newest record in the gate's cache of the whole suite on the line's fork
of its release (no selection), with its counts, its failures shared with
the pristine release and its own, its time, the load, its date and the
project's commit that ran it.  So running one line changes its rows and
keeps the others; a line not run yet says so.  ``inc`` writes it as the
RST fragment doc/source/gate.rst includes.
"""

import json

from nova_fork import generated
from nova_fork.proof import gate

# the fragment doc/source/gate.rst includes, relative to the project
INC = generated.FOLDER / 'gate.inc'
HEADER = ['line', 'release', 'suite', 'run', 'passed', 'failed', 'skipped',
          'shared', 'ours', 'time', 'load', 'date', 'commit']
NOT_RUN = 'not run'
# the failed tests named under the table, of each line, suite and kind
NAMED = 25


def records(root):
    """Every record of the gate's cache."""
    found = []
    for path in sorted(gate.cache_dir(root).glob('*.json')):
        try:
            found.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return found


def is_row(record):
    """A whole suite's run on a fork: what the table shows."""
    return (record.get('step') in gate.SUITES and
            not record.get('pristine') and not record.get('selection') and
            not record.get('ids'))


def latest(found, releases):
    """{(line, suite): record}: each line's newest run of each suite.

    releases: {line: its release}; a record of another release (the
    line's release before it moved on) is not the line's any more.
    """
    result = {}
    for record in found:
        if not is_row(record) or \
                releases.get(record['line']) != record['release']:
            continue
        key = (record['line'], record['step'])
        if key not in result or \
                record['finished'] > result[key]['finished']:
            result[key] = record
    return result


def _count(ids):
    return '?' if ids is None else str(len(ids))


def table(lines, rows):
    """[HEADER, row...] and the failures to name below it.

    lines: [(line, release)] in bases.ini's order; rows: latest().
    The failures: [(line, suite, kind, [test id])], kind ``shared``,
    ``ours`` or ``not told``.
    """
    result = [HEADER]
    failures = []
    for line, release in lines:
        for suite in gate.SUITES:
            record = rows.get((line, suite))
            if record is None:
                result.append([line, release, suite, NOT_RUN] +
                              ['-'] * (len(HEADER) - 4))
                continue
            name = '%s (%s)' % (suite, record['env'])
            tests = record.get('tests') or {}
            if tests.get('run'):
                cells = [str(tests[k]) for k in ('run', 'passed', 'failed',
                                                 'skipped')]
            else:
                cells = ['exit %d' % record['exit'], '-', '-', '-']
            shared, ours = record.get('shared'), record.get('ours')
            if not record.get('failed'):
                shared = ours = []
            result.append([line, release, name] + cells + [
                _count(shared), _count(ours), gate.duration(
                    record['seconds']), '%.1f' % record['load'],
                record['date'], record['commit']])
            if shared is None:
                failures.append((line, name, 'not told', record['failed']))
            for kind, ids in (('shared', shared), ('ours', ours)):
                if ids:
                    failures.append((line, name, kind, ids))
    return result, failures


def render(rows):
    """An RST simple table."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    rule = '  '.join('=' * w for w in widths)
    fmt = '  '.join('%%-%ds' % w for w in widths)
    lines = [rule, (fmt % tuple(rows[0])).rstrip(), rule]
    lines += [(fmt % tuple(r)).rstrip() for r in rows[1:]]
    lines.append(rule)
    return '\n'.join(lines)


KINDS = {
    'shared': 'fails on the pristine release too (upstream\'s)',
    'ours': 'passes on the pristine release (ours)',
    'not told': 'not told: its run on the pristine release gave no result',
}


def inc(rows, failures, cores):
    """The RST fragment for doc/source/gate.rst.

    Nothing in it changes but what the cache's records say.
    """
    text = [
        '.. Written by nova-fork gate, from the records of its cache '
        '(build/results/gate/),',
        '   after a run of a line\'s whole suites, or with --table; do not '
        'edit it by hand.',
        '',
        'On the project\'s machine, %d core%s:' % (
            cores, '' if cores == 1 else 's'),
        '',
        render(rows),
        '',
    ]
    if all(row[3] == NOT_RUN for row in rows[1:]):
        text.append('No suite has run yet: ``nova-fork gate --all --only '
                    'unit,functional``.')
    elif not failures:
        text.append('No test failed in the suites run.')
    else:
        text += ['The tests that failed, by line and suite:', '']
        for line, suite, kind, ids in failures:
            named = ', '.join('``%s``' % i for i in ids[:NAMED])
            if len(ids) > NAMED:
                named += ' and %d more' % (len(ids) - NAMED)
            text.append('* %s, %s, %d %s: %s' % (
                line, suite, len(ids), KINDS[kind], named))
    return '\n'.join(text) + '\n'


def write(root, bases, cores):
    """Write the fragment from the cache; its path.

    Refused (errors.DirtyCheckout) from a checkout with changes.
    """
    generated.refuse_dirty(
        root, INC, ', then run nova-fork gate --table (it writes the '
        'table from the cache)')
    lines = [(line, base.nova) for line, base in bases.items()]
    rows, failures = table(lines, latest(records(root), dict(lines)))
    return generated.write(root, inc(rows, failures, cores), INC)
