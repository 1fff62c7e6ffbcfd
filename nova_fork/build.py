"""Materialize a base as a git tree: the pristine import, then our commits."""

import hashlib
import os
import pathlib
import shutil
import tarfile

from nova_fork import detect
from nova_fork import errors
from nova_fork import fetch
from nova_fork import gitutils

# Bump when the way trees are built changes, so old trees are rebuilt.
FORMAT = '1'
STAMP = 'nova-fork-stamp'


def tree_name(label, pristine=False, without=None):
    if pristine:
        return '%s-pristine' % label
    if without:
        return '%s-without-%d' % (label, without)
    return label


def build_dir(root):
    return pathlib.Path(root) / 'build'


def select(base, pristine=False, without=None):
    """The commits a tree gets: all, none of the fixes, or all but one."""
    commits = base.commits()
    if without is not None:
        numbers = [c.number for c in commits]
        if without not in numbers:
            raise errors.UsageError(
                'series %s has no commit %d; its commits are %s' % (
                    base.series, without,
                    ', '.join('%d (%s)' % (c.number, c.name)
                              for c in commits)))
        dropped = left_out(commits, without)
        return [c for c in commits if c.number not in dropped]
    if pristine:
        return [c for c in commits if not c.is_fix]
    return commits


def left_out(commits, without):
    """Commit without, and the later ones that build on it (needs=).

    >>> from nova_fork.config import Commit
    >>> c = [Commit(1, 'a', None, ()), Commit(2, 'b', None, ()),
    ...      Commit(3, 'c', None, (), needs=(1,))]
    >>> sorted(left_out(c, 1)), sorted(left_out(c, 2))
    ([1, 3], [2])
    """
    dropped = {without}
    for commit in commits:
        if dropped.intersection(commit.needs):
            dropped.add(commit.number)
    return dropped


def digest(base, commits):
    h = hashlib.sha256()
    h.update(('%s\0%s\0%s\0' % (FORMAT, base.nova, base.sha256)).encode())
    for commit in commits:
        h.update(commit.name.encode() + b'\0' + commit.path.read_bytes())
        for name, source in zip(commit.files, commit.sources):
            h.update(name.encode() + b'\0' + source.read_bytes())
    return h.hexdigest()


def unpack(sdist, dest):
    """Unpack an sdist into dest, dropping its top-level folder."""
    with tarfile.open(sdist) as tar:
        members = []
        for member in tar.getmembers():
            parts = pathlib.PurePosixPath(member.name).parts
            if len(parts) < 2 or '..' in parts:
                continue
            member.name = str(pathlib.PurePosixPath(*parts[1:]))
            members.append(member)
        kwargs = {'filter': 'data'} if hasattr(tarfile, 'data_filter') else {}
        tar.extractall(dest, members=members, **kwargs)


def import_sdist(sdist, dest, version, sha256):
    dest.mkdir(parents=True)
    unpack(sdist, dest)
    gitutils.git(dest, 'init', '-q')
    gitutils.git(dest, 'add', '-A', '-f')
    gitutils.git(dest, 'commit', '-q', '-m',
                 'Import nova %s\n\nThe pristine sdist from PyPI, '
                 'sha256 %s.' % (version, sha256))
    gitutils.git(dest, 'tag', version)


def add_files(tree, commit):
    for name, source in zip(commit.files, commit.sources):
        target = tree / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    gitutils.git(tree, 'add', '-f', '--', *commit.files)


def apply_commit(tree, base, commit):
    """Apply one series entry as one commit of the tree."""
    if commit.is_patch:
        proc = gitutils.git(tree, 'am', '-q',
                            '--committer-date-is-author-date',
                            str(commit.path), check=False)
        if proc.returncode:
            # refuse_if_fixed already turned away a release that has it
            gitutils.git(tree, 'am', '--abort', check=False)
            raise errors.PatchError('%s does not apply to nova %s: %s' % (
                commit.path.relative_to(base.root), base.nova,
                detect.describe_failure(commit.path.read_text(),
                                        proc.stderr + proc.stdout)))
        if commit.files:
            add_files(tree, commit)
            gitutils.git(tree, 'commit', '-q', '--amend', '--no-edit')
    else:
        add_files(tree, commit)
        gitutils.git(tree, 'commit', '-q', '-F', str(commit.path))


def refuse_if_fixed(tree, base, commits):
    for commit in commits:
        if commit.is_fix:
            verdict, detail = detect.classify(tree, commit)
            if verdict == detect.HAS:
                raise errors.AlreadyFixed(
                    'nova %s already has the fix (%s %s); refusing to apply '
                    'it twice' % (base.nova, commit.name, detail))


def remove_stale_partials(folder, name):
    """Remove what interrupted builds of this tree left behind."""
    for partial in folder.glob('.%s.partial-*' % name):
        pid = partial.name.rsplit('-', 1)[-1]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(partial, ignore_errors=True)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def build(base, pristine=False, without=None):
    """Build (or reuse) a tree and return its path.

    The tree is made in a temporary folder beside its final place and
    renamed into place only when complete, so an interrupted build never
    leaves a tree that a later run would take for a good one.
    """
    commits = select(base, pristine, without)
    name = tree_name(base.label, pristine, without)
    dest = build_dir(base.root) / name
    want = digest(base, commits)
    stamp = dest / '.git' / STAMP
    if stamp.is_file() and stamp.read_text().strip() == want:
        return dest
    sdist = fetch.fetch(base.root, base.nova, base.sha256)
    partial = build_dir(base.root) / ('.%s.partial-%d' % (name, os.getpid()))
    remove_stale_partials(build_dir(base.root), name)
    shutil.rmtree(partial, ignore_errors=True)
    try:
        import_sdist(sdist, partial, base.nova, base.sha256)
        refuse_if_fixed(partial, base, commits)
        for commit in commits:
            apply_commit(partial, base, commit)
        (partial / '.git' / STAMP).write_text(want + '\n')
        if dest.exists():
            shutil.rmtree(dest)
        partial.rename(dest)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return dest
