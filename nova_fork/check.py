"""Which units of the fix a nova release has, and which line serves it."""

import dataclasses
import hashlib
import re

from nova_fork import config
from nova_fork import errors
from nova_fork import located
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
    code: object = None  # the located.Code read, for check --path

    @property
    def has(self):
        return [u.name for u, answer, _ in self.results
                if answer == units.HAS]

    @property
    def needs(self):
        return units.lacking(self.results)

    def as_json(self):
        out = {'version': self.version,
               'line': self.line.series if self.line else None,
               'has': self.has, 'needs': self.needs}
        na = [u.name for u, answer, _ in self.results if answer == units.NA]
        if na:
            # the units whose path the release does not have
            out['n/a'] = na
        if self.code is not None:
            out['path'] = str(self.code.path)
            if self.code.debian:
                out['debian'] = {'version': self.code.debian[0],
                                 'suite': self.code.debian[1]}
        return out


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
    return line.listed.get(version) or pins.load(root).get(version)


def check(root, version):
    """Report which units nova VERSION has and needs, from its sdist."""
    series, line = serving_line(root, version)
    sdist = fetch.fetch(root, version, known_sha256(root, line, version))
    results = units.of_release(config.load_units(root), version, sdist)
    digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
    return Report(version, series, line, results, digest)


def check_code(root, code):
    """Report which units the nova code at code.path has, from its code."""
    series, line = serving_line(root, code.release)
    try:
        results = units.of_tree(config.load_units(root), code.path)
    except units.UnknownCode as exc:
        raise units.UnknownCode('cannot tell which units of the fix the nova '
                                'in %s has: %s' % (code.path, exc))
    return Report(code.version, series, line, results, code=code)


def render(report, bug):
    """The report as a person reads it, one line a unit, then the verdict."""
    out = ['nova %s (%s)' % (report.version, report.series)]
    code = report.code
    if code is not None:
        out[0] += ' in %s (version from %s%s)' % (
            code.path, code.source, '; Debian %s, %s' % code.debian
            if code.debian else '')
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
    if code is not None and code.debian:
        suite = code.debian[1]
        if suite in located.debian_suites():
            out.append('%s: nova-fork debian %s (the series for Debian %s\'s '
                       'own package)' % (needs, suite, suite))
        else:
            out.append('%s; Debian %s is not a suite nova-fork debian serves '
                       '(%s)' % (needs, suite,
                                 ', '.join(located.debian_suites())))
    elif line is None:
        out.append('%s; no line serves %s yet' % (needs, report.series))
    elif code is not None and code.version != code.release:
        out.append('%s; %s is no release: the series of line %s for its '
                   'release, nova-fork export %s --release %s' % (
                       needs, code.version, line.series, line.series,
                       code.release))
    else:
        version = code.release if code is not None else report.version
        release = '' if version == line.default_nova else \
            ' --release %s' % version
        out.append('%s: nova-fork build %s%s' % (needs, line.series, release))
    return out
