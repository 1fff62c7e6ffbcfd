"""Which units of the fix a nova release has, and which line serves it."""

import dataclasses
import hashlib
import re

from nova_fork import config
from nova_fork import errors
from nova_fork.tree import fetch
from nova_fork.tree import pins
from nova_fork import units

VERSION_RE = re.compile(r'^(\d+)\.\d+\.\d+(\.0(rc|b)\d+)?$')


@dataclasses.dataclass
class Report:
    version: str
    series: str
    line: object  # the config.Base of the line that serves it, or None
    results: list  # [(unit, verdict, detail)]
    sha256: str = ''  # of the sdist read

    @property
    def has(self):
        return [u.name for u, answer, _ in self.results
                if answer == units.HAS]

    @property
    def needs(self):
        return units.lacking(self.results)

    def as_json(self):
        return {'version': self.version,
                'line': self.line.series if self.line else None,
                'has': self.has, 'needs': self.needs}


def major(version):
    """The major version of a nova release; UsageError if it is not one.

    >>> major('29.2.1'), major('30.0.0.0rc1')
    (29, 30)
    """
    match = VERSION_RE.match(version)
    if not match:
        raise errors.UsageError(
            '%r is not a nova version: give one such as 29.2.1 '
            '(https://pypi.org/project/nova/#history lists them)' % version)
    return int(match.group(1))


def serving_line(root, version):
    """(series name, the line that serves VERSION or None)."""
    names = config.load_series_names(root)
    number = major(version)
    if names and number < min(names):
        raise errors.UsageError(
            'nova %s is older than %s (%d.0.0), the first release this '
            'project covers' % (version, names[min(names)], min(names)))
    bases = config.load_bases(root)
    lines = [b for b in bases.values() if major(b.nova) == number]
    series = names.get(number, lines[0].series if lines else 'unknown')
    return series, lines[0] if lines else None


def known_sha256(root, line, version):
    """The sha256 bases.ini or SHA256SUMS pins for VERSION, or None."""
    if line is None:
        return None
    known = dict(line.releases + ((line.default_nova, line.default_sha256),))
    return known.get(version) or pins.load(root).get(version)


def check(root, version):
    """Report which units nova VERSION has and needs, from its sdist."""
    series, line = serving_line(root, version)
    sdist = fetch.fetch(root, version, known_sha256(root, line, version))
    results = units.of_release(config.load_units(root), version, sdist)
    digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
    return Report(version, series, line, results, digest)


def render(report, bug):
    """The report as a person reads it, one line a unit, then the verdict."""
    out = ['nova %s (%s)' % (report.version, report.series)]
    width = max(len(u.name) for u, _, _ in report.results)
    for unit, answer, _ in report.results:
        out.append('  %-5s  %-*s  %s' % (answer, width, unit.name,
                                         unit.summary))
    if not report.needs:
        out.append('nova %s has every unit of the fix for bug %s' % (
            report.version, bug.id))
        return out
    needs = 'nova %s needs %s of the fix for bug %s' % (
        report.version, ', '.join(report.needs), bug.id)
    line = report.line
    if line is None:
        out.append('%s; no line serves %s yet' % (needs, report.series))
    else:
        release = '' if report.version == line.default_nova else \
            ' --release %s' % report.version
        out.append('%s: nova-fork build %s%s' % (needs, line.series, release))
    return out
