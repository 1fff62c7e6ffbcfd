"""Debian's archive: the nova source packages a suite ships, and their files.

A suite's nova is read from the Sources indices of its three pockets (the
suite, SUITE-updates and SUITE-security); the current package is the one
with the highest version, compared by dpkg.  Files are fetched into
.cache/debian and checked against the index's sha256.  The archive may
lack some of a package's files (an orig tarball, a newer debian tarball):
fetch() then returns None and the caller says what it does instead.
"""

import dataclasses
import functools
import hashlib
import lzma
import pathlib
import subprocess
import urllib.error
import urllib.request

from nova_fork import errors

MIRROR = 'http://deb.debian.org/'
POCKETS = (('debian', '%s'), ('debian', '%s-updates'),
           ('debian-security', '%s-security'))
SOURCE = 'nova'
BINARY = 'python3-nova'


@dataclasses.dataclass(frozen=True)
class Package:
    """One version of a package in one pocket of the archive."""

    name: str
    version: str
    pocket: str
    # {file name: (url, sha256)}
    files: tuple

    @property
    def upstream(self):
        """The upstream version: no epoch, no Debian revision.

        >>> Package('nova', '2:26.2.2-1~deb12u4', 'bookworm', ()).upstream
        '26.2.2'
        """
        return self.version.split(':', 1)[-1].rsplit('-', 1)[0]

    def file(self, suffix):
        """The (name, url, sha256) of the file whose name ends in suffix."""
        for name, url, sha256 in self.files:
            if name.endswith(suffix):
                return name, url, sha256
        return None


def paragraphs(text):
    """The paragraphs of a Debian control file, as dicts.

    A field's continuation lines are kept, joined by newlines.

    >>> paragraphs('Package: a\\nFiles:\\n x 1 a.dsc\\n\\nPackage: b\\n')
    [{'Package': 'a', 'Files': '\\nx 1 a.dsc'}, {'Package': 'b'}]
    """
    found = []
    fields = {}
    key = None
    for line in text.splitlines():
        if not line.strip():
            if fields:
                found.append(fields)
            fields, key = {}, None
        elif line[0] in ' \t' and key:
            fields[key] += '\n' + line.strip()
        else:
            key, _, value = line.partition(':')
            fields[key] = value.strip()
    if fields:
        found.append(fields)
    return found


def _get(url):
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            return response.read()
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise errors.FetchError('%s: HTTP %d' % (url, exc.code))
    except (urllib.error.URLError, OSError) as exc:
        raise errors.FetchError(
            'cannot reach Debian\'s archive (%s): %s; check the network or '
            'the proxy' % (url, getattr(exc, 'reason', exc)))


@functools.lru_cache(maxsize=None)
def _index(archive, dist, path):
    data = _get('%s%s/dists/%s/main/%s' % (MIRROR, archive, dist, path))
    return paragraphs(lzma.decompress(data).decode()) if data else []


def _packages(suite, path, name, files_field):
    found = []
    for archive, pattern in POCKETS:
        dist = pattern % suite
        for fields in _index(archive, dist, path):
            if fields.get('Package') != name:
                continue
            base = '%s%s/' % (MIRROR, archive)
            if files_field:
                files = tuple(
                    (parts[2], '%s%s/%s' % (base, fields['Directory'],
                                            parts[2]), parts[0])
                    for parts in (line.split() for line in
                                  fields[files_field].splitlines())
                    if len(parts) == 3)
            else:
                filename = fields['Filename']
                files = ((filename.rsplit('/', 1)[-1], base + filename,
                          fields['SHA256']),)
            found.append(Package(name, fields['Version'], dist, files))
    return newest_first(found)


def sources(suite):
    """The versions of the nova source package in the suite, newest first."""
    found = _packages(suite, 'source/Sources.xz', SOURCE, 'Checksums-Sha256')
    if not found:
        raise errors.FetchError('Debian %s has no %s source package' % (
            suite, SOURCE))
    return found


def binaries(suite):
    """The versions of python3-nova in the suite, newest first."""
    return _packages(suite, 'binary-all/Packages.xz', BINARY, None)


def compare(a, b):
    """-1, 0 or 1 as Debian version a sorts before, with or after b."""
    for result, op in ((0, 'eq'), (-1, 'lt')):
        if subprocess.run(['dpkg', '--compare-versions', a, op, b]
                          ).returncode == 0:
            return result
    return 1


def newest_first(packages):
    unique = {p.version: p for p in reversed(packages)}
    return sorted(unique.values(), key=functools.cmp_to_key(
        lambda a, b: compare(b.version, a.version)))


def cache_dir(root):
    return pathlib.Path(root) / '.cache' / 'debian'


def fetch(root, entry):
    """The path of a file (name, url, sha256) in the cache, or None.

    None when the archive does not have the file (HTTP 404); a file whose
    sha256 is not the index's is refused.
    """
    name, url, sha256 = entry
    path = cache_dir(root) / name
    if path.is_file() and _sha256(path.read_bytes()) == sha256:
        return path
    data = _get(url)
    if data is None:
        return None
    if _sha256(data) != sha256:
        raise errors.HashMismatch(
            '%s from Debian\'s archive has sha256 %s, its index says %s' % (
                name, _sha256(data), sha256))
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + '.partial')
    partial.write_bytes(data)
    partial.rename(path)
    return path


def _sha256(data):
    return hashlib.sha256(data).hexdigest()
