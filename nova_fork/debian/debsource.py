"""Debian's nova source package of a suite, unpacked with Debian's patches.

The suite's current package is the newest version of its pockets.  Where
the archive lacks its debian tarball, the newest version whose debian
tarball it has is taken instead; where it lacks the orig tarball, PyPI's
sdist of the same upstream version is the orig, checked against the
files of the python3-nova binary package of that version.  The tree is
unpacked as dpkg-source -x does: the orig, then debian/, then Debian's
patches pushed with quilt and no fuzz.
"""

import dataclasses
import io
import pathlib
import shutil
import subprocess
import tarfile

from nova_fork.debian import archive
from nova_fork import errors
from nova_fork.tree import build
from nova_fork.tree import fetch
from nova_fork.tree import gitutils

STAMP = '.nova-fork-debian-source'


@dataclasses.dataclass(frozen=True)
class Source:
    """The source package a suite's series is made for."""

    suite: str
    package: archive.Package
    current: archive.Package
    debian_tarball: pathlib.Path
    orig: pathlib.Path
    # what stood in for a file the archive lacks, for the report
    notes: tuple
    # PyPI's sdist stands in for the orig tarball (compare_binary)
    sdist_as_orig: bool = False

    @property
    def upstream(self):
        return self.package.upstream


def folder(root, suite):
    return archive.cache_dir(root) / suite


def pick(root, suite):
    """The Source of the suite: its package and the files to unpack."""
    packages = archive.sources(suite)
    current = packages[0]
    notes = []
    for package in packages:
        entry = package.file('.debian.tar.xz')
        tarball = archive.fetch(root, entry) if entry else None
        if tarball is None:
            notes.append('the archive lacks %s (nova %s, %s)' % (
                entry[0] if entry else 'the debian tarball',
                package.version, package.pocket))
            continue
        orig, from_pypi = _orig(root, suite, package, notes)
        return Source(suite, package, current, tarball, orig, tuple(notes),
                      sdist_as_orig=from_pypi)
    raise errors.FetchError(
        'Debian %s: the archive has no debian tarball of nova for any of '
        '%s, so the series cannot be made after Debian\'s own patches' % (
            suite, ', '.join(p.version for p in packages)))


def _orig(root, suite, package, notes):
    """(the orig tarball, True when PyPI's sdist stands in for it)."""
    entry = package.file('.orig.tar.xz') or package.file('.orig.tar.gz')
    orig = archive.fetch(root, entry) if entry else None
    if orig is not None:
        return orig, False
    sdist = fetch.fetch(root, package.upstream)
    name = 'nova_%s.orig.tar.gz' % package.upstream
    target = folder(root, suite) / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(sdist, target)
    notes.append('the archive lacks %s: PyPI\'s %s stands in for it' % (
        entry[0] if entry else 'the orig tarball', sdist.name))
    return target, True


def unpack(source, dest):
    """The orig and debian/ in dest, Debian's patches pushed (no fuzz)."""
    build.unpack(source.orig, dest)
    with tarfile.open(source.debian_tarball) as tar:
        kwargs = {'filter': 'data'} if hasattr(tarfile, 'data_filter') else {}
        tar.extractall(dest, **kwargs)
    if (dest / 'debian' / 'patches' / 'series').is_file():
        push(dest, 'Debian\'s own patches of nova %s' % source.package.version)


def push(tree, what):
    """quilt push -a --fuzz=0 over debian/patches, as dpkg-source does."""
    if not shutil.which('quilt'):
        raise errors.UsageError('quilt is not installed: apt-get install '
                                'quilt')
    proc = subprocess.run(
        ['quilt', '--quiltrc=-', 'push', '-a', '--fuzz=0'], cwd=tree,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=dict(gitutils.environ(), QUILT_PATCHES='debian/patches',
                 QUILT_PC='.pc'))
    if proc.returncode not in (0, 2) or (
            proc.returncode == 2 and 'No patches in series' not in
            proc.stdout):
        lines = [s for s in proc.stdout.splitlines() if s.strip()]
        raise errors.PatchError('quilt push -a --fuzz=0 of %s fails: %s' % (
            what, ' / '.join(lines[-3:])))
    return proc.stdout


def tree(root, source):
    """(Make or reuse) the unpacked tree as a git repository; its path.

    Its one commit is Debian's tree with Debian's patches applied;
    quilt's .pc/ is left out.
    """
    dest = folder(root, source.suite) / ('nova-%s' % source.package.version
                                         .replace(':', '_'))
    stamp = dest / '.git' / STAMP
    want = '%s %s\n' % (source.debian_tarball.name, source.orig.name)
    if stamp.is_file() and stamp.read_text() == want:
        gitutils.git(dest, 'checkout', '-q', '-f', 'debian')
        gitutils.git(dest, 'clean', '-q', '-f', '-d', '-x', '-e', '.pc')
        return dest
    partial = dest.with_name(dest.name + '.partial')
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        unpack(source, partial)
        gitutils.git(partial, 'init', '-q')
        (partial / '.git' / 'info' / 'exclude').write_text('/.pc/\n')
        gitutils.git(partial, 'add', '-A', '-f', '--', '.', ':!.pc')
        gitutils.git(partial, 'commit', '-q', '-m',
                     'Debian %s: nova %s with Debian\'s patches' % (
                         source.suite, source.package.version))
        gitutils.git(partial, 'tag', 'debian')
        (partial / '.git' / STAMP).write_text(want)
        shutil.rmtree(dest, ignore_errors=True)
        partial.rename(dest)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return dest


def compare_binary(root, source, tree):
    """Check a stand-in orig against python3-nova's files; a sentence.

    Every nova/*.py that the binary package of the same version installs
    must be the tree's file after Debian's patches.
    """
    wanted = [b for b in archive.binaries(source.suite)
              if b.version == source.package.version]
    deb = archive.fetch(root, wanted[0].files[0]) if wanted else None
    if deb is None:
        return ('python3-nova %s is not in the archive: the tree is not '
                'checked against it' % source.package.version)
    data = subprocess.run(['dpkg-deb', '--fsys-tarfile', str(deb)],
                          stdout=subprocess.PIPE, check=True).stdout
    prefix = './usr/lib/python3/dist-packages/'
    compared, differ = 0, []
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar:
            if not (member.isfile() and member.name.startswith(prefix) and
                    member.name.endswith('.py')):
                continue
            name = member.name[len(prefix):]
            if not name.startswith('nova/'):
                continue
            compared += 1
            ours = tree / name
            if not ours.is_file() or (ours.read_bytes() !=
                                      tar.extractfile(member).read()):
                differ.append(name)
    if differ or not compared:
        raise errors.PackageError(
            'the tree of nova %s does not match python3-nova %s: %d of %d '
            'files differ (%s)' % (source.upstream, source.package.version,
                                   len(differ), compared,
                                   ', '.join(differ[:3]) or 'none found'))
    return ('its %d nova/*.py files match python3-nova %s\'s' % (
        compared, source.package.version))
