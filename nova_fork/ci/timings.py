"""How long each Zuul job may run: measured where the gate measured it.

The measured seconds are the gate's (``nova-fork gate``: each line's
newest run of its whole unit and functional suites, from the records of
its cache, build/results/gate/).  That cache is not in git, so ``nova-fork
zuul --timings`` copies what the configuration needs of it into a small
committed file, .zuul.d/timings.json, and the configuration is generated
from bases.ini and that file alone: the same checkout gives the same
configuration on any machine.  A job of a line with no record yet, and
the jobs the gate does not measure (export, reproduce, mutants), take
the default of their kind.
"""

import json
import math
import pathlib

from nova_fork.proof import gate
from nova_fork.proof import gatetable

FILE = pathlib.PurePath('.zuul.d', 'timings.json')

# the jobs of a line, in the order the configuration lists them
KINDS = ('export', 'reproduce', 'mutants', 'unit', 'functional')

# seconds, for a kind of job with no measured time: each is about twice
# what it took on the project's machine of 2 cores (doc/source/ci.rst,
# doc/source/performance.rst; master's whole unit suite took 52 min and
# its functional suite 69 min there)
DEFAULTS = {
    'export': 1800,
    'reproduce': 3600,
    'mutants': 5400,
    'unit': 7200,
    'functional': 9600,
}
# what a job does before its command (the tool, the line's venv, nova's
# tox environments for the suites), which the gate's time leaves out
SETUP = 900
# the measured time, times this, for a slower node or a busier cloud
MARGIN = 2
# rounded up to whole ten minutes
STEP = 600
# the most a Zuul tenant allows by default (max-job-timeout)
MOST = 10800


def timeout(kind, measured=None):
    """(seconds, how they were reached) of a job of kind.

    measured: the gate's record of the suite (seconds, date, commit), or
    None.

    >>> timeout('unit', {'seconds': 3120.4, 'date': '2026-12-08',
    ...                  'commit': 'abc'})
    (7200, '900 s to set up + 2 x 3120 s measured (gate, 2026-12-08, abc)')
    >>> timeout('functional')
    (9600, 'the default of functional jobs: no measured time yet')
    >>> timeout('functional', {'seconds': 6000, 'date': 'd', 'commit': 'c'})
    (10800, "900 s to set up + 2 x 6000 s measured (gate, d, c), cut to the \
tenant's default max-job-timeout")
    """
    if not measured:
        return DEFAULTS[kind], 'the default of %s jobs: no measured ' \
            'time yet' % kind
    seconds = round(measured['seconds'])
    wanted = STEP * math.ceil((SETUP + MARGIN * seconds) / STEP)
    why = '%d s to set up + %d x %d s measured (gate, %s, %s)' % (
        SETUP, MARGIN, seconds, measured['date'], measured['commit'])
    if wanted > MOST:
        return MOST, why + ", cut to the tenant's default max-job-timeout"
    return wanted, why


def read(root):
    """{line: {suite: {seconds, date, commit, release}}} of the file."""
    path = pathlib.Path(root) / FILE
    if not path.is_file():
        return {}
    return json.loads(path.read_text()).get('lines', {})


def from_records(root, bases):
    """The same, from the gate's cache: each line's newest whole runs."""
    releases = {line: base.nova for line, base in bases.items()}
    rows = gatetable.latest(gatetable.records(root), releases)
    found = {}
    for line in bases:
        for suite in gate.SUITES:
            record = rows.get((line, suite))
            if record is None or not (record.get('tests') or {}).get('run'):
                continue
            found.setdefault(line, {})[suite] = {
                'seconds': round(record['seconds']),
                'date': record['date'], 'commit': record['commit'],
                'release': record['release']}
    return found


def text(lines):
    """The file's text."""
    return json.dumps({
        'about': 'Written by nova-fork zuul --timings from the gate\'s '
                 'records (build/results/gate/): the seconds of each '
                 'line\'s newest whole run of a suite.  .zuul.d/ is '
                 'generated from bases.ini and this file; a line or suite '
                 'not here takes the default timeout of its kind '
                 '(nova_fork/ci/timings.py).',
        'lines': lines}, indent=2) + '\n'


def write(root, bases):
    """Write the file from the gate's cache; (path, its lines)."""
    lines = from_records(root, bases)
    path = pathlib.Path(root) / FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text(lines))
    return path, lines
