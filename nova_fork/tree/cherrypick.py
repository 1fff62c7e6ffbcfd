"""The "(cherry picked from commit X)" lines of a line of backports.

A backport names the commit of the line above it (backport_of) that has
its Change-Id, after that commit's own lines, as down upstream's
branches.  The fork's commit ids are reproducible, so the lines can be
written (refresh, backport) and checked (export).
"""

import re

from nova_fork import config
from nova_fork import errors
from nova_fork.tree import build
from nova_fork.tree import gitutils

PICKED_RE = re.compile(r'\(cherry picked from commit ([0-9a-f]{40})\)')
CHANGE_ID_RE = re.compile(r'^Change-Id: (I[0-9a-f]{40})$', re.M)
SUBJECT_RE = re.compile(r'^Subject: (?:\[PATCH[^\]]*\] )?(.*)$', re.M)


def change_key(text):
    """What names a change across lines: its Change-Id, or its subject.

    text is a commit message or a format-patch file.

    >>> change_key('From 0 Mon\\nSubject: [PATCH] Fix it\\n\\nWhy.\\n')
    'Fix it'
    """
    ids = CHANGE_ID_RE.findall(text)
    if ids:
        return ids[-1]
    if text.startswith('From '):
        subject = SUBJECT_RE.search(text)
        if subject:
            return subject.group(1).strip()
    return text.strip().splitlines()[0]


def source_commits(base):
    """{change key: (commit, tree)} of the fork of the line base backports.

    The source line's fork of its own release first, then of each other
    release it lists, for the commits only those carry (the units its
    newest release has from upstream).
    """
    source = config.get_base(base.root, base.backport_of)
    commits = {}
    for version in [source.nova] + [v for v, _ in source.releases]:
        _add_commits(commits, build.build(source.for_release(version)),
                     version)
    return commits


def line_commits(base):
    """{change key: (commit, tree)} of the line's fork of its own release.

    What a release's own backport (base on another release of the
    series) is picked from.
    """
    commits = {}
    _add_commits(commits, build.build(base.for_release(base.default_nova)),
                 base.default_nova)
    return commits


def sources(base):
    """The commits base's own are picked from: {change key: (commit, tree)}.

    Another release of the series than the line's: the line's fork; a
    line of backports: the forks of the line above; otherwise none.
    """
    if base.nova != base.default_nova:
        return line_commits(base)
    if base.backport_of:
        return source_commits(base)
    return {}


def _add_commits(commits, tree, version):
    for commit in gitutils.out(tree, 'rev-list', '%s..HEAD' % version
                               ).split():
        message = gitutils.out(tree, 'show', '-s', '--format=%B', commit)
        commits.setdefault(change_key(message), (commit, tree))


def check(base, tree):
    """Each backport must name a commit of its source series' fork.

    The fork's commit ids are reproducible, so a backport's "(cherry
    picked from commit X)" line can be checked: X must be the commit of
    the source fork with the same Change-Id.  A commit whose Change-Id no
    source fork has is this line's own, first written here.  A release's
    own backport names the line's commit it was picked from last.
    """
    sources = source_commits(base)
    mine = line_commits(base) if any(
        base.is_own(entry)
        for entry in base.commits(check_files=False)) else {}
    for commit in gitutils.out(tree, 'rev-list', '%s..HEAD' % base.nova
                               ).split():
        message = gitutils.out(tree, 'show', '-s', '--format=%B', commit)
        picked = PICKED_RE.findall(message)
        subject = message.splitlines()[0]
        source = sources.get(change_key(message))
        if not picked:
            if source is None:
                continue
            raise errors.PatchError(
                '%s: "%s" has no "(cherry picked from commit ...)" line; '
                'name the %s commit it backports' % (
                    base.series, subject, base.backport_of))
        if tuple(picked) in (picks_of(sources, message),
                             picks_of(mine, message)):
            continue
        raise errors.PatchError(
            '%s: "%s" says it is cherry picked from %s, which is not '
            'the commit with its Change-Id in the %s fork and the lines '
            'of that commit; "nova-fork refresh %s" writes the right '
            'ones' % (base.series, subject, picked[-1][:12],
                      base.backport_of, base.series))


def update_cherry_picks(text, picks):
    """A message or patch whose "(cherry picked from commit X)" lines are
    picks: the lines of the commit it backports, and that commit.

    As down upstream's branches, each backport keeps the lines of the one
    it was picked from and adds its own.

    >>> text = 'S\\n\\nChange-Id: I1\\n(cherry picked from commit %s)\\n---\\n'
    >>> update_cherry_picks(text % ('a' * 40), ('b' * 40, 'c' * 40)) == (
    ...     'S\\n\\nChange-Id: I1\\n(cherry picked from commit %s)\\n'
    ...     '(cherry picked from commit %s)\\n---\\n' % ('b' * 40, 'c' * 40))
    True
    """
    found = list(PICKED_RE.finditer(text))
    if not found:
        return text
    lines = '\n'.join('(cherry picked from commit %s)' % commit
                      for commit in picks)
    return text[:found[0].start()] + lines + text[found[-1].end():]


def picks_of(sources, text):
    """The cherry-pick lines a backport with this message should carry."""
    source = sources.get(change_key(text))
    if source is None:
        return None
    commit, tree = source
    message = gitutils.out(tree, 'show', '-s', '--format=%B', commit)
    return tuple(PICKED_RE.findall(message)) + (commit,)
