"""Fetch a nova sdist from PyPI with pip and verify it."""

import hashlib
import pathlib
import shutil
import subprocess
import sys
import tempfile

from nova_fork import errors


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
    last = [line for line in text.splitlines() if line.strip()]
    raise errors.FetchError('pip download nova==%s failed: %s' % (
        version, last[-1] if last else 'exit %d' % proc.returncode))


def fetch(root, version, sha256=None):
    """Return the path of nova-VERSION.tar.gz, downloading it if needed.

    With sha256, a file whose hash differs is refused and removed, so the
    cache never holds a bad sdist.
    """
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
    else:
        try:
            _verify(path, sha256)
        except errors.HashMismatch:
            path.unlink()
            raise
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
