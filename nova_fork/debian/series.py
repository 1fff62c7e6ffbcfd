"""nova-fork debian SUITE: a quilt series for Debian's own nova package.

The suite's source package (debsource) picks the line by its upstream
version's series.  The line's commits that the package needs (the fix
commits of the units it lacks, and the reproducer they flip) are
cherry-picked onto Debian's tree after Debian's own patches, and written
to dist/debian/SUITE/ as DEP-3 patches named lpBUG-NNNN-..., with the
lines to append to debian/patches/series.  Then it checks that the series
pushes with no fuzz after Debian's patches, that dpkg-source builds and
unpacks the source package with it, and, on the suite's own Python stack
(debstack), that the unit tests of the touched modules pass and that the
fork's regression tests fail without the series, for the bug's reason,
and pass with it.
"""

import pathlib
import re
import shutil
import subprocess
import tempfile

from nova_fork import config
from nova_fork.debian import debsource
from nova_fork.debian import debstack
from nova_fork.dist import quilt
from nova_fork import errors
from nova_fork.tree import build
from nova_fork.tree import gitutils
from nova_fork import units

# what the regression tests need besides their own files: nova's fixtures
TEST_SUPPORT = ('nova/tests/functional/', 'nova/tests/fixtures/')


def report(text):
    """Print a line of the report at once: the checks take minutes."""
    print(text, flush=True)


def dist_dir(root, suite):
    return pathlib.Path(root) / 'dist' / 'debian' / suite


def line_of(root, source):
    """The line whose series is the upstream version's."""
    names = config.load_series_names(root)
    major = int(source.upstream.split('.')[0])
    series = names.get(major)
    bases = config.load_bases(root)
    if series not in bases:
        raise errors.UsageError(
            'Debian %s ships nova %s, of series %s, which no line of %s '
            'covers' % (source.suite, source.package.version,
                        series or 'unknown', config.BASES_FILE))
    return bases[series]


def fork_commits(base, fork):
    """[(series entry, commit id)] of the line's fork, in order."""
    entries = base.commits()
    ids = gitutils.out(fork, 'rev-list', '--reverse',
                       '%s..HEAD' % base.nova).split()
    if len(ids) != len(entries):
        raise errors.ForkError(
            'the fork of %s has %d commits, its series %d: rebuild it '
            '(nova-fork build %s)' % (base.series, len(ids), len(entries),
                                      base.series))
    return list(zip(entries, ids))


def carried(pairs, lacking):
    """The commits the package takes: fixes of units it lacks, and the
    reproducer those fixes flip.

    >>> from nova_fork.config import Commit
    >>> c = [Commit(1, 'r', None, (), review=True),
    ...      Commit(2, 'a', None, (), unit='u1', review=True),
    ...      Commit(3, 'b', None, (), unit='u2'),
    ...      Commit(4, 't', None, ())]
    >>> [e.name for e, _ in carried([(e, e.name) for e in c], ['u2'])]
    ['r', 'b']
    """
    return [(entry, commit) for entry, commit in pairs
            if (entry.is_fix and entry.unit in lacking) or
            (not entry.is_fix and entry.review)]


def cherry_pick(tree, commit, what):
    proc = gitutils.git(tree, 'cherry-pick', '--allow-empty', commit,
                        check=False)
    if proc.returncode:
        conflicts = gitutils.conflicts(tree)
        gitutils.git(tree, 'cherry-pick', '--abort', check=False)
        raise errors.PatchError(
            '%s does not apply to %s (conflicts in %s): the suite needs an '
            'adjusted commit' % (what, tree.name,
                                 ', '.join(conflicts) or 'none listed'))


def apply_test_hunks(tree, commit, fork_tree):
    """Apply a fix commit's changes to the functional tests and fixtures.

    Without its fix: what the tests look like on a tree that lacks it.
    """
    diff = gitutils.git(fork_tree, 'show', '--format=', '--no-renames',
                        commit, '--', *TEST_SUPPORT).stdout
    if not diff:
        return
    gitutils.git(tree, 'apply', '--3way', '--index', '-', input=diff)
    gitutils.git(tree, 'commit', '-q', '--allow-empty', '-m',
                 'The tests of %s without its fix' % commit[:12])


def branches(source_tree, fork, pairs, chosen):
    """Make the branches: series, what ships, and two for the proof.

    debian-tests is Debian's tree with the fork's tests and no fix;
    series-tests is the series with the fork's tests.
    """
    gitutils.git(source_tree, 'fetch', '-q', str(fork), 'HEAD')
    gitutils.git(source_tree, 'checkout', '-q', '-f', '-B', 'series',
                 'debian')
    for entry, commit in chosen:
        cherry_pick(source_tree, commit, '"%s" of line %s' % (
            entry.name, fork.name))
    tests = [(e, c) for e, c in pairs if not e.is_fix and
             (e, c) not in chosen]
    gitutils.git(source_tree, 'checkout', '-q', '-B', 'series-tests',
                 'series')
    for entry, commit in tests:
        cherry_pick(source_tree, commit, '"%s"' % entry.name)
    gitutils.git(source_tree, 'checkout', '-q', '-B', 'debian-tests',
                 'debian')
    for entry, commit in chosen:
        if entry.is_fix:
            apply_test_hunks(source_tree, commit, fork)
        else:
            cherry_pick(source_tree, commit, '"%s"' % entry.name)
    for entry, commit in tests:
        cherry_pick(source_tree, commit, '"%s"' % entry.name)
    gitutils.git(source_tree, 'checkout', '-q', 'series')


def patch_name(bug, number, tree, commit):
    """lpBUG-NNNN-subject.patch: a prefix no Debian patch has."""
    subject = gitutils.out(tree, 'show', '-s', '--format=%f', commit)
    return 'lp%s-%04d-%s.patch' % (bug.id, number, subject[:52])


def write(root, base, tree, fork_ids, outdir, author=None):
    """The DEP-3 patches and series lines; [patch names].

    author: their Author field (default: each commit's own).
    """
    bug = config.load_bug(root)
    outdir.mkdir(parents=True)
    commits = gitutils.out(tree, 'rev-list', '--reverse',
                           'debian..series').split()
    names = []
    for number, (commit, fork_id) in enumerate(zip(commits, fork_ids), 1):
        message = gitutils.out(tree, 'show', '-s', '--format=%B', commit)
        change = re.findall(r'^Change-Id: (I[0-9a-f]+)$', message, re.M)
        origin = 'vendor, nova-fork line %s (nova %s), commit %s%s' % (
            base.series, base.nova, fork_id,
            ', Change-Id %s' % change[-1] if change else '')
        name = patch_name(bug, number, tree, commit)
        (outdir / name).write_text(quilt.dep3(
            tree, commit, bug, origin=origin, forwarded='no', author=author))
        names.append(name)
    (outdir / 'series').write_text(''.join(n + '\n' for n in names))
    return names


def check_push(source, patches_dir, names, work):
    """Debian's tree with the series appended pushes with no fuzz."""
    tree = work / ('nova-%s' % source.upstream)
    debsource.unpack(source, tree)
    for name in names:
        shutil.copyfile(patches_dir / name, tree / 'debian' / 'patches' / name)
    with open(tree / 'debian' / 'patches' / 'series', 'a') as series:
        series.write(''.join(n + '\n' for n in names))
    debsource.push(tree, 'the series after Debian\'s patches')
    return tree


def check_dpkg_source(source, tree, work):
    """dpkg-source -b builds the package; -x unpacks and patches it."""
    orig = work / ('nova_%s.orig%s' % (
        source.upstream, ''.join(source.orig.suffixes[-2:])))
    shutil.copyfile(source.orig, orig)
    _dpkg_source(['-b', tree.name], work)
    dsc = sorted(work.glob('*.dsc'))
    if not dsc:
        raise errors.PackageError('dpkg-source -b wrote no .dsc')
    _dpkg_source(['-x', dsc[0].name, 'unpacked'], work)
    return dsc[0].name


def _dpkg_source(args, cwd):
    if not shutil.which('dpkg-source'):
        raise errors.UsageError('dpkg-source is not installed: apt-get '
                                'install dpkg-dev')
    proc = subprocess.run(['dpkg-source'] + args, cwd=cwd,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    if proc.returncode:
        lines = [s for s in proc.stdout.splitlines() if s.strip()]
        raise errors.PackageError('dpkg-source %s fails: %s' % (
            args[0], ' / '.join(lines[-2:])))


def prepare(root, suite, say=report):
    """The suite's root with Debian's Python stack for nova's tests."""
    return debstack.provision(root, suite, debsource.pick(root, suite), say)


def make(root, suite, tests=True, say=report):
    """Write dist/debian/SUITE/ and run the checks; return its folder."""
    source = debsource.pick(root, suite)
    say('Debian %s: nova %s (current: %s)' % (
        suite, source.package.version, source.current.version))
    for note in source.notes:
        say('  %s' % note)
    tree = debsource.tree(root, source)
    if source.sdist_as_orig:
        say('  %s' % debsource.compare_binary(root, source, tree))
    lacking = units.lacking(units.of_tree(config.load_units(root), tree))
    if not lacking:
        raise errors.AlreadyFixed(
            'Debian %s\'s nova %s has every unit of the fix; it needs no '
            'series' % (suite, source.package.version))
    base = line_of(root, source)
    fork = build.build(base)
    pairs = fork_commits(base, fork)
    chosen = carried(pairs, lacking)
    missing = sorted(set(lacking) - {e.unit for e, _ in chosen})
    if missing:
        raise errors.UsageError(
            'Debian %s\'s nova %s lacks %s, which line %s does not carry '
            '(nova %s has it)' % (suite, source.package.version,
                                  ', '.join(missing), base.series, base.nova))
    say('  lacks %s: line %s (nova %s), %d commits' % (
        ', '.join(lacking), base.series, base.nova, len(chosen)))
    branches(tree, fork, pairs, chosen)
    dest = dist_dir(root, suite)
    partial = dest.with_name('.%s.partial' % suite)
    shutil.rmtree(partial, ignore_errors=True)
    try:
        author, said = gitutils.author(root)
        say('  %s' % said)
        names = write(root, base, tree,
                      [c for _, c in chosen], partial, author)
        with tempfile.TemporaryDirectory() as tmp:
            work = pathlib.Path(tmp)
            pushed = check_push(source, partial, names, work)
            say('  1. quilt push -a --fuzz=0: Debian\'s patches, then %d of '
                'ours: ok' % len(names))
            dsc = check_dpkg_source(source, pushed, work)
            say('  2. dpkg-source -b: %s; dpkg-source -x applies it: ok'
                % dsc)
        if tests:
            debstack.check(root, suite, source, base, tree, lacking, say)
        if dest.exists():
            shutil.rmtree(dest)
        partial.rename(dest)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    say('%s: %s' % (dest.relative_to(root), ', '.join(names)))
    return dest
