"""Fetch a nova sdist from the package index and verify it."""

import hashlib
import pathlib
import shutil
import tempfile
import urllib.error
import urllib.request

from nova_fork import errors
from nova_fork import progress
from nova_fork.tree import index


def sha256sum(path):
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            digest.update(chunk)
    return digest.hexdigest()


def cache_dir(root):
    return pathlib.Path(root) / '.cache' / 'sdists'


def _download(version, dest):
    """Download nova-VERSION.tar.gz into DEST, checked by the index's sha256.

    The sdist is taken from the index's page, as pip takes it, but with no
    Requires-Python filter: the interpreter that runs the tool only reads
    the code (pip download would hide nova 34.0.0 from a Python 3.9 and
    build each sdist's metadata first).
    """
    entry = index.entry(version)
    name = 'nova-%s.tar.gz' % version
    try:
        with urllib.request.urlopen(entry['url'], timeout=300) as answer:
            with open(dest / name, 'wb') as out:
                shutil.copyfileobj(answer, out)
    except (urllib.error.URLError, OSError) as exc:
        raise errors.FetchError(
            'cannot download %s from %s: %s; connect, or copy %s into %s' % (
                name, entry['url'], getattr(exc, 'reason', exc), name,
                dest.parent))
    published = entry.get('hashes', {}).get('sha256')
    if published and sha256sum(dest / name) != published:
        raise errors.HashMismatch(
            'sha256 mismatch for %s: the index publishes %s for it; the '
            'download was corrupted or altered in transit (nothing was '
            'kept): run the command again' % (name, published))


def fetch(root, version, sha256=None):
    """Return the path of nova-VERSION.tar.gz, downloading it if needed.

    With sha256, a file whose hash differs is refused and removed, so the
    cache never holds a bad sdist.
    """
    step = progress.Step()
    cache = cache_dir(root)
    path = cache / ('nova-%s.tar.gz' % version)
    if not path.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            _download(version, pathlib.Path(tmp))
            got = pathlib.Path(tmp) / path.name
            _verify(got, sha256)
            shutil.move(str(got), str(path))
        step.done('fetch: nova %s, downloaded to %s' % (
            version, progress.where(cache, root)))
    else:
        try:
            _verify(path, sha256)
        except errors.HashMismatch:
            path.unlink()
            raise
        step.done('fetch: nova %s, cached in %s' % (
            version, progress.where(cache, root)), once=True)
    return path


def _verify(path, sha256):
    if sha256 is None:
        return
    actual = sha256sum(path)
    if actual != sha256:
        raise errors.HashMismatch(
            'sha256 mismatch for %s: got %s, bases.ini records %s; this is '
            'not the release the fork is built on (the file was discarded)'
            % (path.name, actual, sha256))
