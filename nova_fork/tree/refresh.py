"""Write the commits of an edited tree back into the project.

The inverse of build, as ``gbp pq export`` is of ``gbp pq import``: each
commit of the tree goes back to the series entry it was built from.  A
patch entry gets the commit as ``git format-patch`` writes it, without
the new files the series lists for it; those, and the files of a message
entry, go back to where the project keeps them (the shared path, or the
line's own variant under its files/ folder); a message entry gets the
commit's message.  Right after a build, refresh changes nothing.
"""

from nova_fork import errors
from nova_fork.tree import build
from nova_fork.tree import cherrypick
from nova_fork.tree import gitutils


def _exclude(files):
    return ['.'] + [':(exclude)%s' % name for name in files]


def patch_text(tree, commit, files):
    """The commit as format-patch writes it, leaving out files."""
    return gitutils.git(
        tree, 'format-patch', '--stdout', *gitutils.FORMAT_PATCH_FLAGS,
        '-1', commit, '--', *_exclude(files)).stdout


def changed_files(tree, commit):
    return gitutils.out(tree, 'diff-tree', '--no-commit-id', '--name-only',
                        '-r', '--no-renames', commit).split()


def same_change(tree, one, other):
    """True when two patches change the same lines the same way.

    git patch-id leaves out line numbers: a commit whose context moved is
    the same change.
    """
    ids = [gitutils.git(tree, 'patch-id', '--stable', input=text).stdout
           .split()[:1] for text in (one, other)]
    return ids[0] == ids[1]


def outputs(base, tree):
    """{path in the project: text} that the tree's commits give.

    The tree's commits after the release's tag are the series entries the
    release gets, in order, one a commit.  To split, add or drop a commit,
    edit the series file too (an entry whose file does not exist yet is
    written).
    """
    sdist = build.fetch.fetch(base.root, base.nova, base.sha256)
    entries = build.select(base, build.lacking_units(base, sdist),
                           commits=base.commits(check_files=False))
    commits = gitutils.out(tree, 'rev-list', '--reverse',
                           '%s..HEAD' % base.nova).split()
    if len(commits) != len(entries):
        raise errors.UsageError(
            '%s has %d commits after %s, and %s lists %d for nova %s (%s); '
            'make them match, one entry a commit' % (
                tree, len(commits), base.nova, base.patches / 'series',
                len(entries), base.nova,
                ', '.join(e.name for e in entries)))
    result = {}
    for entry, commit in zip(entries, commits):
        name = entry.name
        if base.nova != base.default_nova:
            # another release of the series: only the commits that had to
            # change for it are its own; the rest stay the line's
            if entry.is_patch:
                text = patch_text(tree, commit, entry.files)
                if not entry.path.is_file():
                    # a commit only older releases take (a unit the line's
                    # own release has): it is the line's
                    result[entry.path] = text
                elif not same_change(tree, text,
                                     (base.patches / name).read_text()):
                    result[base.release_dir / name] = text
                elif base.is_own(entry):
                    # the release's own backport is the line's change
                    # again (the line's context moved its way): it goes
                    result[base.release_dir / name] = None
            continue
        if entry.is_patch:
            result[entry.path] = patch_text(tree, commit, entry.files)
        else:
            stray = sorted(set(changed_files(tree, commit)) -
                           set(entry.files))
            if stray:
                raise errors.UsageError(
                    'commit %s (%s) changes %s, which entry %s does not list: '
                    'make it a patch, or list the new files in %s' % (
                        commit[:12], name, ', '.join(stray), name,
                        base.patches / 'series'))
            message = gitutils.git(tree, 'show', '-s', '--format=%B',
                                   commit).stdout
            result[entry.path] = message.rstrip() + '\n'
        for file_name, source in zip(entry.files, entry.sources):
            text = gitutils.git(
                tree, 'show', '%s:%s' % (commit, file_name)).stdout
            if (base.backport_of and source == base.root / file_name and
                    source.read_text() != text):
                # the project's own files are the newest line's: a line of
                # backports that changed one gets its own variant
                source = base.variants_dir / file_name
                source.parent.mkdir(parents=True, exist_ok=True)
            result[source] = text
    return result


def refresh(base):
    """Write the line's tree back; return the project files that changed.

    For a line of backports, each "(cherry picked from commit X)" line is
    made to name the commit of the source line's fork with the same
    Change-Id, as those ids change whenever the source line changes.
    """
    tree = build.build_dir(base.root) / build.tree_name(base.label)
    if not (tree / '.git').is_dir():
        raise errors.UsageError(
            'no tree at %s to refresh from: "nova-fork build %s" makes it'
            % (tree, base.series))
    # everything is read before anything is written
    wanted = outputs(base, tree)
    sources = cherrypick.sources(base)
    for path, text in wanted.items():
        if text is not None and path.suffix in ('.patch', '.msg'):
            picks = cherrypick.picks_of(sources, text)
            if picks:
                wanted[path] = cherrypick.update_cherry_picks(text, picks)
    changed = []
    for path, text in wanted.items():
        if text is None:
            path.unlink()
            if not any(path.parent.iterdir()):
                path.parent.rmdir()
            changed.append(path.relative_to(base.root))
        elif not path.is_file() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            changed.append(path.relative_to(base.root))
    return sorted(changed)
