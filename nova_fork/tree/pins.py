"""SHA256SUMS: the sha256 of each release a line serves beyond bases.ini.

A line serves every final release of its series.  bases.ini pins the
releases a line is proved on (nova, releases); any other release is pinned
the first time a command takes it, by the sha256 the index publishes for
its sdist, in SHA256SUMS at the project's root, in ``sha256sum``'s format
(``sha256sum -c SHA256SUMS`` in .cache/sdists checks the cache), where the
next run reads it.  A download that does not match is refused, as for
bases.ini's.
"""

import pathlib
import re

from nova_fork import errors
from nova_fork import facts
from nova_fork import progress
from nova_fork.tree import index

FILE = 'SHA256SUMS'
LINE_RE = re.compile(r'^([0-9a-f]{64})  nova-(\S+)\.tar\.gz$')
FINAL_RE = re.compile(r'^\d+\.\d+\.\d+$')


def path(root):
    return pathlib.Path(root) / FILE


def load(root):
    """{version: sha256} of SHA256SUMS ({} when there is none)."""
    pins = {}
    if not path(root).is_file():
        return pins
    for number, text in enumerate(path(root).read_text().splitlines(), 1):
        match = LINE_RE.match(text)
        if not match:
            raise errors.UsageError(
                '%s line %d is not "SHA256  nova-VERSION.tar.gz": %r' % (
                    FILE, number, text))
        pins[match.group(2)] = match.group(1)
    return pins


def save(root, pins):
    """Write PINS, oldest release first, in one rename."""
    text = ''.join('%s  nova-%s.tar.gz\n' % (pins[v], v)
                   for v in sorted(pins, key=facts.version_key))
    partial = path(root).with_name('.%s.partial' % FILE)
    partial.write_text(text)
    partial.replace(path(root))


def sha256(root, version):
    """The pinned sha256 of VERSION, pinning it from the index if new."""
    if not FINAL_RE.match(version):
        raise errors.UsageError(
            'nova %s is not a final release (X.Y.Z): the lines serve final '
            'releases only' % version)
    pins = load(root)
    if version not in pins:
        entry = index.entry(version)
        digest = entry.get('hashes', {}).get('sha256')
        if not digest:
            raise errors.FetchError(
                'the index publishes no sha256 for nova-%s.tar.gz, so '
                'it cannot be pinned: add "%s SHA256" to the line\'s '
                'releases in bases.ini' % (version, version))
        pins[version] = digest
        save(root, pins)
        progress.say('pin: nova %s, sha256 %s from %s, recorded in %s' % (
            version, digest, index.url(), FILE))
    return pins[version]


def on_release(base, version):
    """BASE on nova VERSION.

    VERSION is a release bases.ini lists, or any final one of the line's
    series, pinned here.
    """
    if version is None or version == base.nova or version in base.listed:
        return base.for_release(version)
    major = base.default_nova.split('.')[0]
    if FINAL_RE.match(version) and version.split('.')[0] != major:
        raise errors.UsageError(
            'nova %s is not a release of %s (nova %s.x): name the line of '
            'its series (nova-fork check %s says which)' % (
                version, base.series, major, version))
    return base.for_release(version, sha256(base.root, version))
