"""Export a fork as a quilt series with DEP-3 headers, checked with quilt."""

import pathlib
import shutil
import subprocess
import tempfile

from nova_fork import errors
from nova_fork import progress
from nova_fork.tree import build
from nova_fork.tree import fetch
from nova_fork.tree import gitutils


def dep3(tree, commit, bug, origin=None, forwarded='not-needed',
         author=None):
    """One commit as a DEP-3 patch: header paragraph, then the diff.

    origin: the Origin field (default: vendor, the commit itself); author:
    the Author field (default: the commit's).
    """
    subject = gitutils.out(tree, 'show', '-s', '--format=%s', commit)
    body = gitutils.out(tree, 'show', '-s', '--format=%b', commit)
    author = author or gitutils.out(tree, 'show', '-s', '--format=%an <%ae>',
                                    commit)
    date = gitutils.out(tree, 'show', '-s', '--format=%ad',
                        '--date=short', commit)
    lines = ['Description: %s' % subject]
    for line in body.splitlines():
        lines.append(' ' + line if line.strip() else ' .')
    lines += ['Author: %s' % author,
              'Origin: %s' % (origin or 'vendor, nova-fork commit %s'
                              % commit),
              'Bug: %s' % bug.url,
              'Forwarded: %s' % forwarded,
              'Last-Update: %s' % date,
              '---']
    diff = gitutils.git(tree, 'show', '--format=', '--no-renames', '--stat',
                        '-p', commit).stdout
    return '\n'.join(lines) + '\n' + diff


def write_series(tree, since, outdir, bug, author=None):
    """Write one patch a commit and the series file; return the names."""
    outdir.mkdir(parents=True)
    commits = gitutils.out(tree, 'rev-list', '--reverse',
                           '%s..HEAD' % since).split()
    names = []
    for number, commit in enumerate(commits, start=1):
        subject = gitutils.out(tree, 'show', '-s', '--format=%f', commit)
        name = '%04d-%s.patch' % (number, subject[:52])
        (outdir / name).write_text(dep3(tree, commit, bug, author=author))
        names.append(name)
    (outdir / 'series').write_text(''.join(n + '\n' for n in names))
    return names


def verify(base, patches_dir, only=None):
    """quilt push -a onto each release of the line that takes the series.

    The exported release, and every release bases.ini lists for the line
    (nova and releases) that gets the same commits as the exported one (it
    lacks the same units), is unpacked from its sdist, the series pushed,
    and the changed files compared with the fork built on that release.
    A release that lacks other units gets its own series: export
    --release VERSION.  only: the releases to push onto instead (the
    sweep's one).
    """
    if not shutil.which('quilt'):
        raise errors.UsageError(
            'quilt is not installed, so the quilt series cannot be checked: '
            'apt-get install quilt')
    exported = _subjects(build.build(base), base.nova)
    versions = [base.nova, base.default_nova] + [v for v, _ in base.releases]
    for version in dict.fromkeys(only or versions):
        on_release = base.for_release(version)
        tree = build.build(on_release)
        if _subjects(tree, version) == exported:
            push_all(on_release, patches_dir, tree)


def _subjects(tree, since):
    return gitutils.out(tree, 'log', '--format=%s', '%s..HEAD' % since)


def push_all(base, patches_dir, tree):
    """quilt push -a onto the unpacked sdist; it must give the fork's files."""
    version = base.nova
    sdist = fetch.fetch(base.root, version, base.sha256)
    step = progress.Step()
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / ('nova-%s' % version)
        build.unpack(sdist, src)
        shutil.copytree(patches_dir, src / 'patches')
        proc = subprocess.run(
            ['quilt', 'push', '-a', '--quiltrc=-'], cwd=src,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=dict(gitutils.environ(), QUILT_PATCHES='patches'))
        if proc.returncode:
            raise errors.PatchError('quilt push -a fails on nova %s: %s' % (
                version, proc.stdout.strip().splitlines()[-1]))
        changed = gitutils.out(tree, 'diff', '--name-only', base.nova,
                               'HEAD').split()
        for name in changed:
            if (src / name).read_bytes() != (tree / name).read_bytes():
                raise errors.PatchError(
                    'quilt series on nova %s gives a %s that differs from '
                    'the fork' % (version, name))
    step.done('quilt: the series pushes onto nova %s, as the fork\'s %d '
              'file%s' % (version, len(changed),
                          '' if len(changed) == 1 else 's'))
