"""The Gerrit-ready part of a line's series, as git format-patch files.

The commits of the series marked ``review`` are taken from the line's fork
tree, given the user's own identity as author and ``Signed-off-by``, and
the bug trailers Gerrit wants, and written to ``dist/review/LINE/`` for a
nova contributor to ``git am`` onto a nova clone and push with ``git
review``.  Nothing is written unless every check passed.
"""

import dataclasses
import pathlib
import re
import shutil
import tempfile

from nova_fork import config
from nova_fork import errors
from nova_fork.proof import commitgate
from nova_fork.tree import build
from nova_fork.tree import detect
from nova_fork.tree import fetch
from nova_fork.tree import gitutils

# Nova's limit on a commit's subject (its HACKING and git-review's hook)
SUBJECT_MAX = 50
# where the report of a change's bug is, to file before --bug
REPORT = 'doc/source/bug-report-%s.rst'
# the fixed flags of export, but numbered ([PATCH n/m]) as a series to mail
FORMAT_PATCH_FLAGS = tuple(
    f for f in gitutils.FORMAT_PATCH_FLAGS if f != '-N') + ('--numbered',)

CHANGE_ID_RE = re.compile(r'^Change-Id: (I[0-9a-f]{40})$', re.M)
PICKED_RE = re.compile(r'^\(cherry picked from commit [0-9a-f]{40}\)\n?',
                       re.M)
# What a review series adds that is named after its bug, as nova names
# them: the regression test (regressions/README.rst: test_bug_N.py) and
# the release note (bug-N-...).  The fork names them without a number
# until the bug is filed; --bug N renames them.
REGRESSIONS = 'nova/tests/functional/regressions/'
NOTES = 'releasenotes/notes/'
BUG_URL = 'https://bugs.launchpad.net/nova/+bug/%s'
# The owner the fork's commits give their FIXME, NOTE and to-do comments
# (the local part of the commits' fixed e-mail): in the series for Gerrit
# they name the uploader, by the IRC nick that --nick or git config gives.
FORK_OWNER = gitutils.EMAIL.partition('@')[0]
OWNED_RE = re.compile(r'\b(FIXME|NOTE|TODO)\(%s\)' % re.escape(FORK_OWNER))
NICK_CONFIG = 'nova-fork.nick'
NICK_RE = re.compile(r'[A-Za-z_\[\]\\^{}|`][A-Za-z0-9_\[\]\\^{}|`-]{0,31}')


@dataclasses.dataclass
class Result:
    # the folder written, None when a commit failed the gate
    dest: pathlib.Path
    # what was checked and what to do next, a line each, for a person
    notes: list
    # the gate of each commit alone: [(subject, {check: Cell})]
    gate: list = dataclasses.field(default_factory=list)
    # the lines each commit adds, in order
    added: list = dataclasses.field(default_factory=list)


def label(series, change=config.DEFAULT_CHANGE):
    """LINE for the first change, LINE-CHANGE for the others.

    >>> label('master'), label('master', 'live-migration')
    ('master', 'master-live-migration')
    """
    return series if change == config.DEFAULT_CHANGE else '%s-%s' % (
        series, change)


def review_dir(root, series, change=config.DEFAULT_CHANGE):
    return pathlib.Path(root) / 'dist' / 'review' / label(series, change)


def bug_number(text):
    """The --bug argument as a number, or a usage error.

    >>> bug_number('2012345')
    '2012345'
    >>> bug_number('0')
    Traceback (most recent call last):
    ...
    nova_fork.errors.UsageError: --bug takes a Launchpad bug number, \
a positive integer, not '0'
    """
    if text is None or re.fullmatch(r'[1-9][0-9]*', text):
        return text
    raise errors.UsageError('--bug takes a Launchpad bug number, a '
                            'positive integer, not %r' % text)


def identity(cwd=None):
    """'Name <email>' of the user, as git resolves it in cwd."""
    who, said = gitutils.user_identity(cwd)
    if not who:
        raise errors.UsageError(
            'no git identity to sign the review series with (git var '
            'GIT_AUTHOR_IDENT: %s); set yours: %s' % (
                said, gitutils.SET_IDENTITY))
    return who


def nick(given=None, cwd=None):
    """The IRC nick the series' comments name as their owner.

    --nick, else ``git config nova-fork.nick``, else git-review's
    ``gitreview.username``; a usage error saying how to set it otherwise.

    >>> nick('jdoe')
    'jdoe'
    >>> nick('j doe')
    Traceback (most recent call last):
    ...
    nova_fork.errors.UsageError: --nick 'j doe' is not an IRC nick \
(letters, digits and _[]\\^{}|`-, not starting with a digit or -)
    """
    found = given
    for key in (NICK_CONFIG, 'gitreview.username'):
        if found:
            break
        found = gitutils.user_config(key, cwd)
    if not found:
        raise errors.UsageError(
            'no IRC nick to name as the owner of the FIXME and NOTE '
            'comments of the series: give --nick NICK, or set it once '
            'with git config --global %s NICK' % NICK_CONFIG)
    if not NICK_RE.fullmatch(found):
        raise errors.UsageError(
            '--nick %r is not an IRC nick (letters, digits and '
            '_[]\\^{}|`-, not starting with a digit or -)' % found)
    return found


def owner_in_patch(patch, owner):
    """The patch with the fork's comments owned by owner.

    >>> owner_in_patch('+# FIXME(%s): x\\n-# NOTE(%s): y' % (
    ...     FORK_OWNER, FORK_OWNER), 'jdoe')
    '+# FIXME(jdoe): x\\n-# NOTE(jdoe): y'
    """
    return OWNED_RE.sub(lambda m: '%s(%s)' % (m.group(1), owner), patch)


def parse_onto(text):
    """GITDIR[@REF] as (GITDIR, REF); REF is HEAD when not given.

    >>> parse_onto('/no/such/repo@stable/2026.1')
    (PosixPath('/no/such/repo'), 'stable/2026.1')
    >>> parse_onto('/no/such/repo')
    (PosixPath('/no/such/repo'), 'HEAD')
    """
    path = pathlib.Path(text)
    if '@' in text and not path.exists():
        where, _, ref = text.rpartition('@')
        return pathlib.Path(where), ref or 'HEAD'
    return path, 'HEAD'


def resolve_onto(text):
    """(GITDIR, REF, SHA) of --onto, or a usage error saying why not."""
    gitdir, ref = parse_onto(text)
    if not gitdir.is_dir() or gitutils.git(
            gitdir, 'rev-parse', '--git-dir', check=False).returncode:
        raise errors.UsageError(
            '--onto %s: %s is not a git directory; name a clone or mirror '
            'of nova, e.g. --onto ~/nova@master' % (text, gitdir))
    proc = gitutils.git(gitdir, 'rev-parse', '--verify', '--quiet',
                        '%s^{commit}' % ref, check=False)
    if proc.returncode:
        raise errors.UsageError(
            '--onto %s: %s has no commit %r (git -C %s branch -a lists its '
            'branches)' % (text, gitdir, ref, gitdir))
    if ref == 'HEAD':
        # a mirror's HEAD is its default branch: say which
        ref = gitutils.git(gitdir, 'symbolic-ref', '--short', '-q', 'HEAD',
                           check=False).stdout.strip() or ref
    return gitdir, ref, proc.stdout.strip()


def review_commits(base, tree, change=config.DEFAULT_CHANGE):
    """[(Commit, commit id)] of the tree's commits of the change.

    The tree has one commit per series entry the release gets, in order
    (build.select), on the pristine import tagged with the version.
    """
    sdist = fetch.fetch(base.root, base.nova, base.sha256)
    commits = build.select(base, build.lacking_units(base, sdist))
    ids = gitutils.out(tree, 'rev-list', '--reverse',
                       '%s..HEAD' % base.nova).split()
    if len(ids) != len(commits):
        raise errors.PatchError(
            '%s has %d commits on nova %s, the series %d; run "nova-fork '
            'refresh %s" to keep its edits, or remove it to build it '
            'again' % (tree, len(ids), base.nova, len(commits), base.series))
    got = {c.number for c in commits}
    for commit in base.commits():
        if commit.review == change and commit.number not in got:
            raise errors.UsageError(
                '%s: entry %d (%s) is marked review, but nova %s has its '
                'unit %s; only the commits the release gets can be '
                'reviewed' % (base.patches / 'series', commit.number,
                              commit.name, base.nova, commit.unit))
    picked = [(c, i) for c, i in zip(commits, ids) if c.review == change]
    if not picked:
        changes = sorted({c.review for c in base.commits() if c.review})
        raise errors.UsageError(
            '%s marks no entry %s: add the word %s to the entries that go '
            'to Gerrit%s' % (
                base.patches / 'series', word(change), word(change),
                ' (its changes: %s)' % ', '.join(changes) if changes
                else ''))
    return picked


def word(change):
    """The word of a series entry that marks it for change."""
    if change == config.DEFAULT_CHANGE:
        return config.REVIEW
    return '%s=%s' % (config.REVIEW, change)


def check_messages(tree, picked):
    """Each subject fits nova's limit, each commit has its Change-Id."""
    for commit, sha in picked:
        subject = gitutils.out(tree, 'show', '-s', '--format=%s', sha)
        if len(subject) > SUBJECT_MAX:
            raise errors.PatchError(
                'entry %d (%s): its subject is %d characters, more than '
                "nova's %d: \"%s\"; shorten it in the line's tree and run "
                'nova-fork refresh' % (commit.number, commit.name,
                                       len(subject), SUBJECT_MAX, subject))
        message = gitutils.out(tree, 'show', '-s', '--format=%B', sha)
        if not CHANGE_ID_RE.search(message):
            raise errors.PatchError(
                'entry %d (%s) has no "Change-Id: I..." line, which Gerrit '
                'needs: add one to its message' % (commit.number,
                                                   commit.name))


def trailers(commit, message, bug_id, new_bug, who, closes=True):
    """The arguments of git interpret-trailers for a commit's message.

    With new_bug, a fix says Closes-Bug when it completes the fix
    (closes), Partial-Bug before that, and the other commits
    Related-Bug.  Change-Id is kept, and moved last: Gerrit reads it from
    the footer.

    >>> from nova_fork.config import Commit
    >>> fix = Commit(1, 'a.patch', None, (), unit='u', review=True)
    >>> msg = 'S\\n\\nRelated-Bug: #1\\nChange-Id: I%s\\n' % ('0' * 40)
    >>> trailers(fix, msg, '1', '7', 'A <a@b>')
    ... # doctest: +NORMALIZE_WHITESPACE
    ['--if-exists', 'addIfDifferent', '--trailer', 'Closes-Bug: #7',
     '--trailer', 'Signed-off-by: A <a@b>',
     '--where', 'end', '--if-exists', 'replace',
     '--trailer', 'Change-Id: I0000000000000000000000000000000000000000']
    >>> trailers(fix, msg, '1', '7', 'A <a@b>', closes=False)[3]
    'Partial-Bug: #7'
    """
    add = []
    if not re.search(r'^[\w-]+-Bug: #%s$' % bug_id, message, re.M):
        add.append('Related-Bug: #%s' % bug_id)
    if new_bug:
        kind = 'Related'
        if commit.is_fix:
            kind = 'Closes' if closes else 'Partial'
        add.append('%s-Bug: #%s' % (kind, new_bug))
    add.append('Signed-off-by: %s' % who)
    args = ['--if-exists', 'addIfDifferent']
    for trailer in add:
        args += ['--trailer', trailer]
    change_id = CHANGE_ID_RE.findall(message)[-1]
    return args + ['--where', 'end', '--if-exists', 'replace',
                   '--trailer', 'Change-Id: %s' % change_id]


def bug_names(tree, shas, new_bug):
    """{path: new path} of what the commits add that is named after a bug.

    A regression test module that is not test_bug_N.py yet becomes
    test_bug_NEW.py, a release note bug-NEW-NAME.yaml.
    """
    renames = {}
    for sha in shas:
        for path in gitutils.out(
                tree, 'diff-tree', '--no-commit-id', '--name-only', '-r',
                '--diff-filter=A', sha).split():
            name = pathlib.PurePath(path).name
            if path.startswith(REGRESSIONS) and path.endswith('.py') and \
                    not re.fullmatch(r'test_bug_\d+\.py', name):
                renames[path] = '%stest_bug_%s.py' % (REGRESSIONS, new_bug)
            elif path.startswith(NOTES) and path.endswith('.yaml') and \
                    not name.startswith('bug-'):
                renames[path] = '%sbug-%s-%s' % (NOTES, new_bug, name)
    return renames


def rename_in_patch(patch, renames):
    """The patch with its paths renamed (diff headers and stat lines)."""
    for old, new in renames.items():
        patch = patch.replace('a/%s' % old, 'a/%s' % new)
        patch = patch.replace('b/%s' % old, 'b/%s' % new)
        patch = patch.replace(' %s ' % old, ' %s ' % new)
    return patch


def link_note(work, path, new_bug):
    """Add the bug's link to a release note the commit adds, if missing."""
    note = work / path
    text = note.read_text()
    if BUG_URL % new_bug in text:
        return False
    text = text.rstrip('\n') + (
        ' See `bug %(n)s`_ for details.\n\n    .. _bug %(n)s: %(url)s\n' % {
            'n': new_bug, 'url': BUG_URL % new_bug})
    note.write_text(text)
    return True


def split_picks(message):
    """(the message without its cherry-pick lines, those lines).

    >>> pick = '(cherry picked from commit %s)\\n' % ('a' * 40)
    >>> body, picks = split_picks('S\\n\\nChange-Id: I1\\n' + pick)
    >>> body, picks[:28]
    ('S\\n\\nChange-Id: I1\\n\\n', '(cherry picked from commit a')
    """
    picks = ''.join(p.rstrip() + '\n' for p in PICKED_RE.findall(message))
    return PICKED_RE.sub('', message).rstrip() + '\n\n', picks


def rewrite(tree, tag, picked, bug_id, new_bug, who, owner, work):
    """The picked commits on tag, in a clone at work, as the user's.

    Their FIXME, NOTE and TODO comments are owner's.

    Return {path: new path} of the files renamed after new_bug.
    """
    gitutils.git(tree, 'clone', '-q', '--no-checkout', str(tree), str(work))
    gitutils.git(work, 'checkout', '-q', '--detach', tag)
    renames = bug_names(tree, [sha for _, sha in picked], new_bug) \
        if new_bug else {}
    last_fix = max([n for n, (c, _) in enumerate(picked) if c.is_fix],
                   default=None)
    for n, (commit, sha) in enumerate(picked):
        # git am, not cherry-pick: a 3-way merge could quietly rebase it
        patch = gitutils.git(work, 'format-patch', '--stdout', '-1',
                             *gitutils.FORMAT_PATCH_FLAGS, sha).stdout
        patch = owner_in_patch(rename_in_patch(patch, renames), owner)
        proc = gitutils.git(work, 'am', '-q', input=patch, check=False)
        if proc.returncode:
            raise errors.PatchError(
                'entry %d (%s) does not apply without the entries before it '
                'that are not marked review (%s): mark those review too, or '
                'order the series so that the review entries come first' % (
                    commit.number, commit.name, detect.describe_failure(
                        patch, proc.stderr + proc.stdout)))
        for path in renames.values():
            if path.startswith(NOTES) and (work / path).is_file() and \
                    link_note(work, path, new_bug):
                gitutils.git(work, 'add', path)
        message = gitutils.out(work, 'show', '-s', '--format=%B', 'HEAD')
        for old, new in renames.items():
            message = message.replace(old, new)
        # a backport's "(cherry picked from commit X)" lines stay last,
        # after Change-Id, as on upstream's stable branches
        body, picks = split_picks(message)
        message = gitutils.git(
            work, 'interpret-trailers',
            *trailers(commit, body, bug_id, new_bug, who,
                      closes=n == last_fix),
            input=body).stdout
        message = message.rstrip() + '\n' + picks
        # --author keeps the commit's own author date
        gitutils.git(work, 'commit', '-q', '--amend', '--cleanup=verbatim',
                     '--author', who, '-F', '-', input=message)
    return renames


def format_patch(work, tag, outdir):
    gitutils.git(work, 'format-patch', '-q', *FORMAT_PATCH_FLAGS,
                 '-o', str(outdir), '%s..HEAD' % tag)
    return sorted(outdir.glob('*.patch'))


def git_am(checkout, patches, onto):
    """git am the patches in checkout; a PatchError naming onto if not."""
    for patch in patches:
        proc = gitutils.git(checkout, 'am', '-q', str(patch), check=False)
        if proc.returncode:
            gitutils.git(checkout, 'am', '--abort', check=False)
            raise errors.PatchError('%s does not git am onto %s: %s' % (
                patch.name, onto, detect.describe_failure(
                    patch.read_text(), proc.stderr + proc.stdout)))


def check_pristine(base, patches, tmp):
    """git am onto a clone of the pristine release."""
    pristine = build.build(base, pristine=True)
    clone = tmp / 'pristine'
    gitutils.git(pristine, 'clone', '-q', '--no-checkout', str(pristine),
                 str(clone))
    gitutils.git(clone, 'checkout', '-q', '--detach', base.nova)
    git_am(clone, patches, 'nova %s' % base.nova)


def check_onto(gitdir, ref, sha, patches, tmp):
    """git am onto ref of gitdir, in a worktree removed afterwards."""
    checkout = tmp / 'onto'
    gitutils.git(gitdir, 'worktree', 'add', '-q', '--detach', str(checkout),
                 sha)
    try:
        git_am(checkout, patches, '%s (%s)' % (ref, sha[:12]))
    finally:
        gitutils.git(gitdir, 'worktree', 'remove', '--force', str(checkout),
                     check=False)
        gitutils.git(gitdir, 'worktree', 'prune', check=False)


def review(base, bug=None, onto=None, cwd=None, gate=True, nick_=None,
           change=config.DEFAULT_CHANGE):
    """Write a change of the line to dist/review/LABEL; a Result.

    With gate, each commit is first checked alone (commitgate); nothing
    is written when one fails (Result.dest is None).
    """
    new_bug = bug_number(bug)
    bug_id = config.load_bug(base.root).id
    report = REPORT % change
    if new_bug == bug_id:
        raise errors.UsageError(
            '--bug %s is the bug of the build path, which upstream fixed; '
            'file the path of the change as its own bug (%s) and give its '
            'number' % (bug, report))
    who = identity(cwd)
    owner = nick(nick_, cwd)
    target = resolve_onto(onto) if onto else None
    tree = build.build(base)
    picked = review_commits(base, tree, change)
    check_messages(tree, picked)
    notes = ['%d commit(s) marked %s, subjects of at most %d '
             'characters: %s' % (len(picked), word(change), SUBJECT_MAX,
                                 ', '.join(str(c.number) for c, _ in picked)),
             'author and Signed-off-by: %s' % who,
             'the owner of its FIXME and NOTE comments: %s' % owner]
    dest = review_dir(base.root, base.series, change)
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.parent / ('.%s.partial' % dest.name)
    shutil.rmtree(partial, ignore_errors=True)
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = pathlib.Path(tmp)
            renames = rewrite(tree, base.nova, picked, bug_id, new_bug, who,
                              owner, tmp / 'work')
            for old, new in sorted(renames.items()):
                notes.append('named after bug %s: %s (the fork\'s %s)' % (
                    new_bug, new, old))
            patches = format_patch(tmp / 'work', base.nova, partial)
            added = added_lines(tmp / 'work', base.nova)
            notes.append('%d line(s) added by the series (%s)' % (
                sum(added), ', '.join(str(n) for n in added)))
            check_pristine(base, patches, tmp)
            notes.append('applies onto nova %s (the pristine release)' %
                         base.nova)
            if target:
                gitdir, ref, sha = target
                check_onto(gitdir, ref, sha, patches, tmp)
                notes.append('applies onto %s (%s) of %s' % (
                    ref, sha[:12], gitdir))
            if gate:
                rows = commitgate.gate(base, tmp / 'work', base.nova)
        if commitgate.failed(rows):
            return Result(None, notes, rows, added)
        if dest.exists():
            shutil.rmtree(dest)
        partial.rename(dest)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    if new_bug:
        notes.append('the fixes say Partial-Bug: #%s, the last Closes-Bug: '
                     '#%s, and Related-Bug: #%s; the other commits '
                     'Related-Bug: #%s' % (new_bug, new_bug, bug_id, new_bug))
    else:
        notes.append('the commits say only Related-Bug: #%s: file the path '
                     'of the change as its own bug (the report is %s), then '
                     'run again with --bug N' % (bug_id, report))
    return Result(dest, notes, rows, added)


def added_lines(work, tag):
    """[the lines each commit of the series adds], in order."""
    added = []
    for commit in gitutils.out(work, 'rev-list', '--reverse',
                               '%s..HEAD' % tag).split():
        stat = gitutils.out(work, 'show', '--format=', '--numstat', commit)
        added.append(sum(int(line.split()[0]) for line in stat.splitlines()
                         if line.split() and line.split()[0].isdigit()))
    return added
