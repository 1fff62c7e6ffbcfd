"""Fetch a nova sdist from PyPI with pip and verify it."""

import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import urllib.request

from nova_fork import errors
from nova_fork import progress

INDEX = 'https://pypi.org/simple'
SIMPLE_JSON = 'application/vnd.pypi.simple.v1+json'


def sha256sum(path):
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            digest.update(chunk)
    return digest.hexdigest()


def cache_dir(root):
    return pathlib.Path(root) / '.cache' / 'sdists'


def _pip_download(version, dest):
    cmd = [sys.executable, '-m', 'pip', 'download', '--no-deps',
           '--no-binary', ':all:', '--disable-pip-version-check',
           '-d', str(dest), 'nova==%s' % version]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    if proc.returncode == 0:
        return
    text = proc.stdout
    if 'No module named pip' in text:
        raise errors.FetchError(
            'pip is not available for %s: install pip (python3-pip) so that '
            'nova-fork can fetch sdists' % sys.executable)
    if 'from versions: none' in text or 'NewConnectionError' in text or \
            'Temporary failure in name resolution' in text or \
            'Max retries exceeded' in text:
        raise errors.FetchError(
            'cannot download nova==%s: PyPI is not reachable (no network?); '
            'connect, or copy nova-%s.tar.gz into %s' % (
                version, version, dest.parent))
    if 'No matching distribution' in text:
        raise errors.FetchError(
            'nova %s is not a release on PyPI; run '
            '"pip index versions nova" to list them' % version)
    if 'metadata-generation-failed' in text:
        # pip builds an sdist's metadata even to download it, and the
        # setup.cfg of some old releases no longer parses (nova 21.0.0:
        # "hacking>=2.0<2.1"); take the file from the index instead.
        return _index_download(version, dest)
    last = [line for line in text.splitlines() if line.strip()]
    raise errors.FetchError('pip download nova==%s failed: %s' % (
        version, last[-1] if last else 'exit %d' % proc.returncode))


def _index_download(version, dest):
    """Download nova-VERSION.tar.gz from the index's simple API (PEP 691).

    The file must match the sha256 the index gives for it.
    """
    index = os.environ.get('PIP_INDEX_URL', INDEX).rstrip('/')
    name = 'nova-%s.tar.gz' % version
    request = urllib.request.Request(
        '%s/nova/' % index, headers={'Accept': SIMPLE_JSON})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            files = json.load(answer)['files']
        entry = next((f for f in files if f['filename'] == name), None)
        if entry is None:
            raise errors.FetchError(
                'nova %s has no sdist on %s' % (version, index))
        with urllib.request.urlopen(entry['url'], timeout=300) as answer:
            (dest / name).write_bytes(answer.read())
    except (OSError, ValueError, KeyError) as exc:
        raise errors.FetchError('cannot download %s from %s: %s' % (
            name, index, exc))
    _verify(dest / name, entry['hashes'].get('sha256'))


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
            _pip_download(version, pathlib.Path(tmp))
            got = pathlib.Path(tmp) / path.name
            if not got.is_file():
                raise errors.FetchError(
                    'pip download nova==%s gave no %s' % (version, path.name))
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
