"""Carry the edits of the line above into a line's backports.

``backport`` writes a line's commits afresh, as cherry-picks of the line
above: what a person changed in a backport to make it fit its release
(a test adapted, an "On nova X" paragraph) is lost when the line above
changes.  ``follow`` keeps it: it takes the line's own fork as it is and,
commit by commit, adds what the line above changed in the commit with the
same Change-Id since a project revision (by default HEAD: what is not
committed yet), as a ``fixup -C`` of ``git rebase -i``, then picks the
commits the line above gained, as git would: a conflict stops the rebase
for a person, and ``git rebase --continue`` goes on.

The change of one commit of the line above is the difference between its
new commit and its old patch applied onto its new parent: only what that
commit's own edit changed, whatever the commits before it changed.  Its
message is a three-way merge (``git merge-file``) of the old and new
messages of the line above with the line's own, so the line's paragraphs
stay; ``refresh`` writes the "(cherry picked from commit X)" lines.
"""

import contextlib
import difflib
import os
import pathlib
import shutil
import subprocess
import tempfile

from nova_fork import config
from nova_fork import errors
from nova_fork.tree import build
from nova_fork.tree import cherrypick
from nova_fork.tree import gitutils
from nova_fork.tree import refresh

# what a project revision needs to build a line's fork as it was then
SNAPSHOT = ('bases.ini', 'SHA256SUMS', 'patches', 'nova', 'releasenotes')


@contextlib.contextmanager
def snapshot(root, rev):
    """A project root of the files of revision rev, in a temporary folder.

    Its sdist cache and release imports are the project's own, so that
    building a fork there fetches and imports nothing again.
    """
    proc = gitutils.git(root, 'rev-parse', '--verify', '-q',
                        '%s^{commit}' % rev, check=False)
    if proc.returncode:
        raise errors.UsageError(
            '--since %s: the project has no such revision (git log shows '
            'its commits)' % rev)
    with tempfile.TemporaryDirectory(prefix='nova-fork-since-') as tmp:
        tmp = pathlib.Path(tmp)
        names = [name for name in SNAPSHOT if gitutils.git(
            root, 'cat-file', '-e', '%s:%s' % (rev, name),
            check=False).returncode == 0]
        archive = subprocess.run(
            ['git', '-C', str(root), 'archive', rev] + names,
            stdout=subprocess.PIPE, check=True).stdout
        subprocess.run(['tar', '-x', '-C', str(tmp)], input=archive,
                       check=True)
        (tmp / '.cache').symlink_to(pathlib.Path(root, '.cache').resolve())
        (tmp / 'build').mkdir()
        imports = build.build_dir(root) / 'imports'
        imports.mkdir(parents=True, exist_ok=True)
        (tmp / 'build' / 'imports').symlink_to(imports.resolve())
        yield tmp


def strip_picks(message):
    """The message without its "(cherry picked from commit X)" lines.

    >>> strip_picks('S\\n\\nChange-Id: I1\\n(cherry picked from commit %s)\\n'
    ...             % ('a' * 40))
    'S\\n\\nChange-Id: I1\\n'
    """
    return '\n'.join(
        line for line in message.rstrip('\n').splitlines()
        if not cherrypick.PICKED_RE.fullmatch(line.strip())) + '\n'


def _edits(base, other):
    """{index of base: paragraphs} and {index: paragraphs inserted before}.

    What other changed of base, paragraph by paragraph: a changed run of
    base is keyed by its first index (the others map to []).
    """
    changed, inserted = {}, {}
    matcher = difflib.SequenceMatcher(None, base, other, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == 'insert':
            inserted[i1] = other[j1:j2]
        elif op in ('replace', 'delete'):
            changed[i1] = other[j1:j2]
            for i in range(i1 + 1, i2):
                changed[i] = []
    return changed, inserted


def merge_messages(old, mine, new):
    """The line's message with the edit of the line above (old to new).

    A three-way merge, paragraph by paragraph: what the line above changed
    and what the line changed (its own paragraphs, "On zed: ...") both
    stay.  The line's "(cherry picked from commit X)" lines stay last
    (refresh makes them name the new commits).  None when both changed
    the same paragraph.

    >>> pick = '(cherry picked from commit %s)\\n' % ('a' * 40)
    >>> merge_messages('S\\n\\nWhy.\\n\\nC: 1\\n',
    ...                'S\\n\\nWhy.\\n\\nOn zed: more.\\n\\nC: 1\\n' + pick,
    ...                'S\\n\\nWhy not.\\n\\nC: 1\\n') == (
    ...     'S\\n\\nWhy not.\\n\\nOn zed: more.\\n\\nC: 1\\n' + pick)
    True
    >>> merge_messages('S\\n\\nWhy.\\n', 'S\\n\\nWhy so.\\n',
    ...                'S\\n\\nWhy not.\\n') is None
    True
    """
    base, ours, theirs = (
        [p.strip('\n') for p in strip_picks(text).split('\n\n')
         if p.strip()] for text in (old, mine, new))
    our_changes, our_inserts = _edits(base, ours)
    their_changes, their_inserts = _edits(base, theirs)
    result = []
    for i in range(len(base) + 1):
        result += their_inserts.get(i, []) + our_inserts.get(i, [])
        if i == len(base):
            break
        if i in our_changes and i in their_changes and \
                our_changes[i] != their_changes[i]:
            return None
        result += our_changes.get(i, their_changes.get(i, [base[i]]))
    picks = ''.join(line.strip() + '\n' for line in mine.splitlines()
                    if cherrypick.PICKED_RE.fullmatch(line.strip()))
    return '\n\n'.join(result) + '\n' + picks


def _message(tree, commit):
    return gitutils.out(tree, 'show', '-s', '--format=%B', commit)


def _changed(old, new):
    """Whether a commit of the line above changed.

    Its message, or the lines it adds and removes: not only their context,
    which the commits before it may have moved.
    """
    (old_commit, old_tree), (new_commit, new_tree) = old, new
    if strip_picks(_message(old_tree, old_commit)) != strip_picks(
            _message(new_tree, new_commit)):
        return True
    return _edited_lines(old_tree, old_commit) != _edited_lines(
        new_tree, new_commit)


def _edited_lines(tree, commit):
    """The commit's diff without its context: [file or +/- line]."""
    diff = gitutils.git(tree, 'show', '--format=', '--no-renames', '-U0',
                        commit).stdout
    return [line for line in diff.splitlines()
            if line.startswith(('+', '-')) or line.startswith('diff ')]


def fixup(tree, old, new, message, keep):
    """A commit in tree whose own change is the edit of a commit above.

    Its parent is the old commit applied onto the new one's parent, its
    tree that with the new commit's version of the paths that keep(path)
    says the line has (a file the line's backport left out stays out),
    its message the line's new message.
    """
    (old_commit, old_tree), (new_commit, new_tree) = old, new
    for source in {str(old_tree), str(new_tree)}:
        gitutils.git(tree, 'fetch', '-q', '--no-tags', source, 'HEAD')
    gitutils.git(tree, 'fetch', '-q', '--no-tags', str(old_tree), old_commit)
    gitutils.git(tree, 'fetch', '-q', '--no-tags', str(new_tree), new_commit)
    with tempfile.TemporaryDirectory(prefix='nova-fork-fixup-') as work:
        gitutils.git(tree, 'worktree', 'add', '-q', '--detach', work,
                     new_commit + '^')
        try:
            proc = gitutils.git(work, 'cherry-pick', '--allow-empty',
                                '--keep-redundant-commits', old_commit,
                                check=False)
            if proc.returncode:
                raise errors.PatchError(
                    'the old commit %s does not apply onto the new parent '
                    'of %s in the line above: its edits of the commits '
                    'before it overlap this one; run "nova-fork backport" '
                    'and adapt the backports again' % (old_commit[:12],
                                                       new_commit[:12]))
            parent = gitutils.out(work, 'rev-parse', 'HEAD')
            for path in gitutils.out(work, 'diff', '--name-only', parent,
                                     new_commit).splitlines():
                if not keep(path):
                    continue
                if gitutils.git(work, 'cat-file', '-e', '%s:%s' % (
                        new_commit, path), check=False).returncode:
                    gitutils.git(work, 'rm', '-q', '--', path)
                else:
                    gitutils.git(work, 'checkout', new_commit, '--', path)
            fixed = gitutils.out(work, 'write-tree')
        finally:
            gitutils.git(tree, 'worktree', 'remove', '--force', work,
                         check=False)
    return gitutils.git(
        tree, 'commit-tree', fixed, '-p', parent,
        input=message).stdout.strip()


def has_path(tree, commit):
    """keep(path) of fixup: whether the line has path at its commit."""
    touched = set(gitutils.out(tree, 'diff-tree', '--no-commit-id',
                               '--name-only', '-r', commit).splitlines())

    def keep(path):
        return path in touched or gitutils.git(
            tree, 'cat-file', '-e', '%s:%s' % (commit, path),
            check=False).returncode == 0
    return keep


def plan(base, tree, old, new, added):
    """The todo of git rebase -i that carries the edits; ([lines], notes).

    added: the change keys of the commits of the line above to pick.
    """
    todo, notes = [], []
    for commit in gitutils.out(tree, 'rev-list', '--reverse',
                               '%s..HEAD' % base.nova).split():
        message = _message(tree, commit)
        key = cherrypick.change_key(message)
        todo.append('pick %s' % commit)
        subject = message.splitlines()[0]
        if key not in old or key not in new:
            continue
        if not _changed(old[key], new[key]):
            continue
        merged = merge_messages(_message(old[key][1], old[key][0]), message,
                                _message(new[key][1], new[key][0]))
        if merged is None:
            raise errors.PatchError(
                '%s: the message of "%s" changed in line %s where the line '
                'changed it too: edit it by hand (nova-fork build %s, git '
                'rebase -i, nova-fork refresh %s)' % (
                    base.series, subject, base.backport_of, base.series,
                    base.series))
        todo.append('fixup -C %s' % fixup(tree, old[key], new[key], merged,
                                          has_path(tree, commit)))
        notes.append('followed: %s' % subject)
    for key in added:
        commit, source_tree = new[key]
        gitutils.git(tree, 'fetch', '-q', '--no-tags', str(source_tree),
                     commit)
        # -x: the line (cherry picked from commit X) that refresh updates
        todo.append('exec git cherry-pick -x %s' % commit)
        subject = _message(source_tree, commit).splitlines()[0]
        notes.append('picked: %s' % subject)
    return todo, notes


def follow(base, since='HEAD'):
    """Carry the edits of the line above since a revision; (notes, paths).

    The commits the line above gained are picked after the line's own,
    and their series entries added to the line's series.
    """
    if not base.backport_of:
        raise errors.UsageError(
            'line %s backports no other line: give it backport_of in %s'
            % (base.series, config.BASES_FILE))
    if base.nova != base.default_nova:
        raise errors.UsageError(
            'follow carries the edits of line %s into the fork of %s\'s '
            'own release; for nova %s run "nova-fork backport %s '
            '--release %s"' % (base.backport_of, base.series, base.nova,
                               base.series, base.nova))
    source = config.get_base(base.root, base.backport_of)
    with snapshot(base.root, since) as old_root:
        old = cherrypick.source_commits(config.get_base(old_root,
                                                        base.series))
        # the line's fork as its patches are (a tree a failed follow left
        # rebased would be taken for it)
        shutil.rmtree(build.build_dir(base.root) / build.tree_name(
            base.label), ignore_errors=True)
        tree = build.build(base)
        # the snapshot's trees go away with it: keep their commits in the
        # line's tree
        for key, (commit, old_tree) in list(old.items()):
            gitutils.git(tree, 'fetch', '-q', '--no-tags', str(old_tree),
                         commit)
            old[key] = (commit, tree)
    new = cherrypick.source_commits(base)
    added, paths = add_entries(base, source, old, new)
    todo, notes = plan(base, tree, old, new, added)
    # the tree is no longer what its patches build until refresh
    (tree / '.git' / build.STAMP).unlink()
    run_rebase(base, tree, todo)
    return notes, paths + refresh.refresh(base)


def add_entries(base, source, old, new):
    """Add to the line's series the entries the line above gained.

    Those of the units the line's release lacks, and those of tests.
    Returns (their change keys in order, the project paths written); the
    entry files are the source's until refresh writes the line's own.
    """
    series = base.patches / 'series'
    have = {cherrypick.change_key(entry.path.read_text())
            for entry in base.commits(check_files=False)}
    sdist = build.fetch.fetch(base.root, base.nova, base.sha256)
    lacking = build.lacking_units(base, sdist)
    line_of = {line.split()[0]: line.strip() for line in
               (source.patches / 'series').read_text().splitlines()
               if line.split() and not line.startswith('#')}
    numbers = [entry.number for entry in base.commits(check_files=False)]
    number = max(numbers or [0])
    lines, keys, written = [], [], []
    for entry in source.commits(check_files=False):
        key = cherrypick.change_key(entry.path.read_text())
        if key in have or key in old or key not in new:
            continue
        if entry.unit and entry.unit not in lacking:
            continue
        # numbered after the line's own entries
        number += 1
        name = renumbered(entry.name, number)
        lines.append(line_of[entry.name].replace(entry.name, name, 1))
        keys.append(key)
        dest = base.patches / name
        dest.write_text(entry.path.read_text())
        written.append(dest.relative_to(base.root))
    if lines:
        series.write_text(series.read_text().rstrip('\n') + '\n' +
                          '\n'.join(lines) + '\n')
        written.append(series.relative_to(base.root))
    return keys, written


def renumbered(name, number):
    """An entry's file name with another number.

    >>> renumbered('0006-Fix-it.patch', 8)
    '0008-Fix-it.patch'
    """
    return '%04d-%s' % (number, name.split('-', 1)[1])


def run_rebase(base, tree, todo):
    """git rebase -i with the todo; a PatchError naming what to do if not."""
    with tempfile.NamedTemporaryFile('w', suffix='.todo',
                                     delete=False) as f:
        f.write('\n'.join(todo) + '\n')
    try:
        env = gitutils.environ()
        env['GIT_SEQUENCE_EDITOR'] = 'cp %s' % f.name
        proc = subprocess.run(
            ('git', '-c', 'safe.directory=*', 'rebase', '-i',
             '--keep-empty', base.nova), cwd=tree, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    finally:
        os.unlink(f.name)
    if proc.returncode:
        conflicts = gitutils.conflicts(tree)
        raise errors.PatchError(
            'following line %s stops in %s: %s; resolve it there, say in '
            'the message what had to change, "git cherry-pick --continue" '
            'if a cherry-pick stopped, "git rebase --continue", then '
            '"nova-fork refresh %s"' % (
                base.backport_of, tree,
                'conflicts in %s' % ', '.join(conflicts) if conflicts
                else proc.stdout.strip().splitlines()[-1],
                base.series))
