"""The nova code a user runs: a source tree, a site-packages, an install.

Distributions backport fixes without changing nova's version, so what a
release has is read in the code itself (units.py); the version, found
beside the code, only names the series and its line.  Nothing here
imports nova: its dependencies may be missing or heavy.
"""

import dataclasses
import email.parser
import gzip
import pathlib
import re
import subprocess

from nova_fork.env import chroot
from nova_fork import errors

RELEASE_RE = re.compile(r'^(\d+)\.(\d+)\.(\d+)')
# the first line of a Debian changelog: "nova (2:26.2.2-1~deb12u5)
# bookworm-security; urgency=medium"
CHANGELOG_RE = re.compile(r'^(\S+) \(([^)]+)\) ([^;\s]+)')
# not from the current folder (python -c puts it first), and a regular
# package only (a folder named nova is a namespace package)
FIND_SPEC = (
    'import importlib.util, sys\n'
    'sys.path = [p for p in sys.path if p]\n'
    'spec = importlib.util.find_spec("nova")\n'
    'print(list(spec.submodule_search_locations)[0]\n'
    '      if spec and spec.origin else "")\n')


@dataclasses.dataclass
class Code:
    path: pathlib.Path  # the folder that holds the nova package
    version: str
    # where the version was read (PKG-INFO, a dist-info, git describe)
    source: str
    # Debian's package of it: (version, suite), or None
    debian: tuple = None

    @property
    def release(self):
        """The X.Y.Z release the version is, or starts with."""
        return RELEASE_RE.match(self.version).group(0)


def _metadata_version(path):
    """Version: of a METADATA or PKG-INFO file."""
    message = email.parser.Parser().parsestr(path.read_text(
        errors='replace'), headersonly=True)
    return message.get('Version')


def _candidates(folder):
    """The metadata files of the nova in FOLDER, most specific first.

    FOLDER is a nova source tree or a site-packages.
    """
    found = []
    for pattern, name in (('nova-*.dist-info', 'METADATA'),
                          ('nova-*.egg-info', 'PKG-INFO'),
                          ('nova.egg-info', 'PKG-INFO')):
        found += sorted(p / name for p in folder.glob(pattern))
    found.append(folder / 'PKG-INFO')
    return [p for p in found if p.is_file()]


def _git_version(folder):
    proc = subprocess.run(
        ['git', '-c', 'safe.directory=*', '-C', str(folder), 'describe',
         '--tags', '--abbrev=12'],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


def debian_package(folder):
    """(version, suite) of the python3-nova package FOLDER is part of.

    FOLDER is .../usr/lib/python3/dist-packages, of the system or of a
    package unpacked with dpkg-deb -x; its changelog names the suite.
    """
    if folder.name != 'dist-packages' or len(folder.parents) < 4:
        return None
    root = folder.parents[3]
    changelog = root / 'usr/share/doc/python3-nova/changelog.Debian.gz'
    if not changelog.is_file():
        return None
    with gzip.open(changelog, 'rt', errors='replace') as f:
        match = CHANGELOG_RE.match(f.readline())
    if not match:
        return None
    suite = match.group(3).split('-')[0]
    return match.group(2), suite


def find(path):
    """The Code at PATH: a nova source tree, or a folder holding nova."""
    folder = pathlib.Path(path).resolve()
    if folder.name == 'nova' and (folder / '__init__.py').is_file():
        folder = folder.parent
    if not (folder / 'nova' / '__init__.py').is_file():
        raise errors.UsageError(
            '%s holds no nova package (nova/__init__.py): give a nova source '
            'tree or the site-packages (dist-packages) nova is installed in'
            % path)
    version = source = None
    files = _candidates(folder)
    if files:
        version, source = _metadata_version(files[0]), files[0]
    if not version:
        version, source = _git_version(folder), 'git describe'
    if not version or not RELEASE_RE.match(version):
        raise errors.UsageError(
            'cannot tell which nova %s is: no nova-*.dist-info, '
            'nova-*.egg-info or PKG-INFO beside it, and no git tag (found '
            '%r)' % (path, version))
    if isinstance(source, pathlib.Path):
        source = str(source.relative_to(folder))
    return Code(folder, version, source, debian_package(folder))


def installed(python):
    """The folder holding the nova that PYTHON imports.

    importlib finds the package without importing it.
    """
    try:
        proc = subprocess.run([python, '-c', FIND_SPEC],
                              stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    except OSError as exc:
        raise errors.UsageError('cannot run %s: %s' % (python, exc))
    if proc.returncode:
        said = [s for s in proc.stderr.splitlines() if s.strip()]
        raise errors.UsageError('%s could not look for nova: %s' % (
            python, said[-1] if said else 'exit %d' % proc.returncode))
    package = proc.stdout.strip()
    if not package:
        raise errors.UsageError(
            '%s has no nova to import; name the interpreter nova is '
            'installed for (--python), or its folder (--path)' % python)
    return pathlib.Path(package).parent


def debian_suites():
    """The Debian suites nova-fork debian writes a series for."""
    return sorted(chroot.SUITES)
