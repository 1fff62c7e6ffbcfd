"""Materialize a base as a git tree: the pristine import, then our commits."""

import hashlib
import os
import pathlib
import shutil
import tarfile

from nova_fork import config
from nova_fork import errors
from nova_fork import progress
from nova_fork.tree import detect
from nova_fork.tree import fetch
from nova_fork.tree import gitutils
from nova_fork import units

# Bump when the way trees are built changes, so old trees are rebuilt.
FORMAT = '3'
STAMP = 'nova-fork-stamp'
# the commits a tree took with a 3-way merge (apply_commit)
THREE_WAY = 'nova-fork-3way'
# build/IMPORTS/VERSION: the pristine import of each release (imported)
IMPORTS = 'imports'


def tree_name(label, pristine=False, without=None, release=False):
    if release:
        return '%s-release' % label
    if pristine:
        return '%s-pristine' % label
    if without:
        return '%s-without-%s' % (label, without)
    return label


def build_dir(root):
    return pathlib.Path(root) / 'build'


def select(base, lacking, pristine=False, without=None, commits=None):
    """The commits a tree gets.

    The commits of tests always; of the fix, those of the units the
    release lacks (``lacking``): none for ``pristine``, and all but
    ``without`` (a unit) and the units that build on it for a mutant.
    """
    commits = base.commits() if commits is None else commits
    carried = [c.unit for c in commits if c.is_fix and c.unit in lacking]
    if without is not None and without not in carried:
        raise errors.UsageError(
            'nova %s with series %s has no commit of unit %s to leave out; '
            'it carries %s' % (base.nova, base.series, without,
                               ', '.join(carried) or 'none'))
    if not pristine and not carried:
        raise errors.AlreadyFixed(
            'nova %s already has every unit of the fix that series %s '
            'carries (%s); nothing to apply ("nova-fork check %s" says '
            'which it has)' % (base.nova, base.series,
                               ', '.join(sorted({c.unit for c in commits
                                                 if c.is_fix})), base.nova))
    dropped = left_out(commits, without) if without else set()
    return [c for c in commits
            if not c.is_fix or (not pristine and c.unit in lacking and
                                c.unit not in dropped)]


def tests_kept(base, lacking, chosen):
    """The fix commits a tree leaves out but whose tests it keeps.

    A fix commit changes nova's code and the tests that show the change
    (a reproducer's assertions flipped, unit tests of the fixed code).
    The pristine release and a mutant leave out the unit's code, not its
    tests: the tests are what must fail there.  The units the release
    has from upstream are left out whole.
    """
    return [c for c in base.commits()
            if c.is_fix and c.unit in lacking and c not in chosen]


def left_out(commits, without):
    """Unit without, and the units of the commits that build on it.

    >>> from nova_fork.config import Commit
    >>> c = [Commit(1, 'a', None, (), unit='u1'),
    ...      Commit(2, 'b', None, (), unit='u2'),
    ...      Commit(3, 'c', None, (), needs=('u1',), unit='u3')]
    >>> sorted(left_out(c, 'u1')), sorted(left_out(c, 'u2'))
    (['u1', 'u3'], ['u2'])
    """
    dropped = {without}
    for commit in commits:
        if dropped.intersection(commit.needs):
            dropped.add(commit.unit)
    return dropped


def lacking_units(base, sdist):
    """The names of the units of the fix nova's sdist lacks."""
    return units.lacking(units.of_release(config.load_units(base.root),
                                          base.nova, sdist))


def digest(base, commits, tests_only=()):
    h = hashlib.sha256()
    h.update(('%s\0%s\0%s\0' % (FORMAT, base.nova, base.sha256)).encode())
    for commit in commits:
        mark = b'tests\0' if commit in tests_only else b''
        h.update(mark + commit.name.encode() + b'\0' +
                 commit.path.read_bytes())
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


def imported(root, sdist, version, sha256):
    """The pristine import of a release, made once: build/imports/VERSION.

    Every tree of the release is a clone of it (``clone_import``), so the
    sdist is unpacked and its files hashed into git once, not once a
    tree.  Made beside its place and renamed into place when complete,
    as a tree is.
    """
    folder = build_dir(root) / IMPORTS
    dest = folder / version
    want = '%s %s' % (FORMAT, sha256)
    stamp = dest / '.git' / STAMP
    if stamp.is_file() and stamp.read_text().strip() == want:
        return dest
    step = progress.Step()
    name = version
    partial = folder / ('.%s.partial-%d' % (name, os.getpid()))
    folder.mkdir(parents=True, exist_ok=True)
    remove_stale_partials(folder, name)
    shutil.rmtree(partial, ignore_errors=True)
    try:
        import_sdist(sdist, partial, version, sha256)
        (partial / '.git' / STAMP).write_text(want + '\n')
        # another command may have made it meanwhile, and clone it now
        if not (stamp.is_file() and stamp.read_text().strip() == want):
            if dest.exists():
                shutil.rmtree(dest)
            partial.rename(dest)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    step.done('build: %s, made: the import of nova %s' % (
        progress.where(dest, root), version))
    return dest


def clone_import(source, dest):
    """A tree whose one commit is the import in source (``imported``).

    ``git clone --local`` links the import's objects rather than copy
    them; the clone keeps no remote, so that the tree is what
    ``import_sdist`` makes: the import commit, on master, tagged.
    """
    gitutils.git(dest.parent, 'clone', '-q', '--local', str(source),
                 str(dest))
    gitutils.git(dest, 'remote', 'remove', 'origin')


def add_files(tree, commit):
    for name, source in zip(commit.files, commit.sources):
        target = tree / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    gitutils.git(tree, 'add', '-f', '--', *commit.files)


def three_way_source(tree, base):
    """Bring the objects of the line's listed forks into TREE, once.

    The blobs a patch was written against are then there for ``git am
    -3``: a release bases.ini does not list takes a commit whose context
    moved as a cherry-pick would, and stops only at a real conflict.
    """
    if (tree / '.git' / THREE_WAY).exists():
        return
    for version in base.listed:
        fork = build(base.for_release(version))
        gitutils.git(tree, 'fetch', '-q', '--no-tags', str(fork), 'HEAD')
    (tree / '.git' / THREE_WAY).write_text('')


def apply_commit(tree, base, commit):
    """Apply one series entry as one commit of the tree.

    A patch that does not apply to a release bases.ini does not list is
    taken with a 3-way merge (its name is then added to the tree's
    .git/nova-fork-3way); a conflict stops it.
    """
    if commit.is_patch:
        am = ('am', '-q', '--committer-date-is-author-date')
        proc = gitutils.git(tree, *am, str(commit.path), check=False)
        if proc.returncode:
            gitutils.git(tree, 'am', '--abort', check=False)
            why = detect.describe_failure(commit.path.read_text(),
                                          proc.stderr + proc.stdout)
            name = commit.path.relative_to(base.root)
            if base.nova in base.listed:
                raise errors.PatchError('%s does not apply to nova %s: %s' % (
                    name, base.nova, why))
            three_way_source(tree, base)
            proc = gitutils.git(tree, *(am + ('-3', str(commit.path))),
                                check=False)
            if proc.returncode:
                conflicts = gitutils.conflicts(tree)
                gitutils.git(tree, 'am', '--abort', check=False)
                raise errors.PatchError(
                    '%s does not apply to nova %s, even with a 3-way merge: '
                    'it conflicts in %s; backport it to %s (nova-fork '
                    'backport %s --release %s)' % (
                        name, base.nova, ', '.join(conflicts) or why,
                        base.nova, base.series, base.nova))
            with open(tree / '.git' / THREE_WAY, 'a') as moved:
                moved.write('%s: %s\n' % (commit.name, why))
        if commit.files:
            add_files(tree, commit)
            gitutils.git(tree, 'commit', '-q', '--amend', '--no-edit')
    else:
        add_files(tree, commit)
        gitutils.git(tree, 'commit', '-q', '-F', str(commit.path))


def three_way(tree):
    """The commits of TREE taken with a 3-way merge: ['NAME: why']."""
    path = pathlib.Path(tree) / '.git' / THREE_WAY
    return path.read_text().splitlines() if path.is_file() else []


def apply_tests(tree, base, commit):
    """Apply only what a fix commit changes under nova/tests/."""
    tests = 'nova/tests/'
    if commit.is_patch:
        apply = ('apply', '--index', '--include=%s*' % tests)
        proc = gitutils.git(tree, *apply, str(commit.path), check=False)
        if proc.returncode and base.nova not in base.listed:
            # as apply_commit does: context that moved takes a 3-way merge
            three_way_source(tree, base)
            proc = gitutils.git(tree, *(apply + ('-3', str(commit.path))),
                                check=False)
            if proc.returncode:
                gitutils.git(tree, 'reset', '-q', '--hard', check=False)
        if proc.returncode:
            raise errors.PatchError(
                'the tests of %s do not apply to nova %s without its '
                'fix: %s' % (commit.path.relative_to(base.root), base.nova,
                             proc.stderr.strip()))
    names = [n for n in commit.files if n.startswith(tests)]
    for name, source in zip(commit.files, commit.sources):
        if name in names:
            target = tree / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    if names:
        gitutils.git(tree, 'add', '-f', '--', *names)
    if gitutils.git(tree, 'diff', '--cached', '--quiet',
                    check=False).returncode:
        gitutils.git(tree, 'commit', '-q', '-m',
                     'The tests of %s, without its fix' % commit.name)


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


def build(base, pristine=False, without=None, release=False):
    """Build (or reuse) a tree and return its path.

    release: the release as upstream ships it, with none of the fork's
    commits, not even its tests (build/LINE-release).

    The tree is made in a temporary folder beside its final place and
    renamed into place only when complete, so an interrupted build never
    leaves a tree that a later run would take for a good one.
    """
    sdist = fetch.fetch(base.root, base.nova, base.sha256)
    step = progress.Step()
    lacking = lacking_units(base, sdist)
    if release:
        chosen = tests_only = commits = []
    else:
        chosen = select(base, lacking, pristine, without)
        tests_only = tests_kept(base, lacking, chosen)
        commits = [c for c in base.commits()
                   if c in chosen or c in tests_only]
    name = tree_name(base.label, pristine, without, release)
    dest = build_dir(base.root) / name
    want = digest(base, commits, tests_only)
    stamp = dest / '.git' / STAMP
    if stamp.is_file() and stamp.read_text().strip() == want:
        step.done('build: %s, reused' % progress.where(dest, base.root),
                  once=True)
        return dest
    partial = build_dir(base.root) / ('.%s.partial-%d' % (name, os.getpid()))
    remove_stale_partials(build_dir(base.root), name)
    shutil.rmtree(partial, ignore_errors=True)
    try:
        clone_import(imported(base.root, sdist, base.nova, base.sha256),
                     partial)
        for commit in commits:
            if commit in tests_only:
                apply_tests(partial, base, commit)
            else:
                apply_commit(partial, base, commit)
        (partial / '.git' / STAMP).write_text(want + '\n')
        if dest.exists():
            shutil.rmtree(dest)
        partial.rename(dest)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    step.done('build: %s, made: nova %s and %d commit%s' % (
        progress.where(dest, base.root), base.nova, len(commits),
        '' if len(commits) == 1 else 's'))
    return dest
