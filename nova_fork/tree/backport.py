"""Write a line's commits as backports of the line above it.

As upstream backports down its branches: each commit of the source line's
fork (``backport_of``) that the release needs is cherry-picked with ``git
cherry-pick -x`` onto the pristine release, in build/LABEL, and the result
is written back to the line's patches with ``refresh``.  A conflict stops
it, with the tree left for a person to resolve.
"""

import shutil

from nova_fork import config
from nova_fork import errors
from nova_fork.tree import build
from nova_fork.tree import cherrypick
from nova_fork.tree import gitutils
from nova_fork.tree import refresh

HEADER = ('# Backports of line %(source)s to nova %(nova)s (series '
          '%(series)s), one\n# commit a line, in order; the format: '
          'doc/source/tool.rst.\n')


def write_series(base, source):
    """The line's series and entry files, from the source line's."""
    base.patches.mkdir(parents=True, exist_ok=True)
    lines = [line for line in
             (source.patches / 'series').read_text().splitlines()
             if line.strip() and not line.startswith('#')]
    (base.patches / 'series').write_text(
        HEADER % {'source': source.series, 'nova': base.nova,
                  'series': base.series} + '\n'.join(lines) + '\n')
    for entry in source.commits(check_files=False):
        shutil.copyfile(entry.path, base.patches / entry.name)


def picks(base, entries, sources, where):
    """[(source commit, source tree) or entry] for the entries, in order.

    An entry whose Change-Id no source fork has is the line's own
    (2024.1's claim-abort for 29.2.0): it stays as the line has it.
    """
    result = []
    for entry in entries:
        key = cherrypick.change_key(entry.path.read_text())
        if key in sources:
            result.append(sources[key])
        elif entry.is_fix and entry.is_patch:
            result.append(entry)
        else:
            raise errors.UsageError(
                '%s: %s is in no commit of %s (its Change-Id or subject '
                'is not there): write it in %s by hand' % (
                    base.series, entry.name, where, base.patches))
    return result


def backport(base):
    """Cherry-pick the source line's commits onto base; return refresh's.

    base on another release of its series than the line's: the line's own
    commits are picked onto that release, and the ones that had to change
    become the release's own (base.release_dir).
    """
    if base.nova != base.default_nova:
        where = 'the %s fork of nova %s' % (base.series, base.default_nova)
    elif base.backport_of:
        source = config.get_base(base.root, base.backport_of)
        if not (base.patches / 'series').is_file():
            write_series(base, source)
        where = 'line %s' % base.backport_of
    else:
        raise errors.UsageError(
            'line %s backports no other line: give it backport_of in %s'
            % (base.series, config.BASES_FILE))
    sources = cherrypick.sources(base)
    sdist = build.fetch.fetch(base.root, base.nova, base.sha256)
    entries = build.select(base, build.lacking_units(base, sdist),
                           commits=base.commits(check_files=False))
    wanted = picks(base, entries, sources, where)
    tree = build.build_dir(base.root) / build.tree_name(base.label)
    shutil.rmtree(tree, ignore_errors=True)
    build.import_sdist(sdist, tree, base.nova, base.sha256)
    # every commit to pick is in the tree, for a person who resolves one
    for source_tree in sorted({str(p[1]) for p in wanted
                               if not isinstance(p, config.Commit)}):
        gitutils.git(tree, 'fetch', '-q', '--no-tags', source_tree, 'HEAD')
    for entry, pick in zip(entries, wanted):
        if isinstance(pick, config.Commit):
            build.apply_commit(tree, base, pick)
            continue
        commit, source_tree = pick
        proc = gitutils.git(tree, 'cherry-pick', '-x', commit, check=False)
        if proc.returncode:
            conflicts = gitutils.conflicts(tree)
            rest = ' '.join(p[0] for p in wanted[wanted.index(pick) + 1:]
                            if not isinstance(p, config.Commit))
            release = ('' if base.nova == base.default_nova
                       else ' --release %s' % base.nova)
            raise errors.PatchError(
                'cherry-picking %s onto nova %s conflicts in %s: resolve it '
                'in %s, "git cherry-pick --continue", say in the message '
                'what had to change, pick the rest (git cherry-pick -x %s), '
                'then "nova-fork refresh %s%s"' % (
                    commit[:12], base.nova, ', '.join(conflicts) or '?',
                    tree, rest or '(none)', base.series, release))
        own_files(tree, entry)
    return refresh.refresh(base)


def own_files(tree, entry):
    """The project files of entry as the line has them, in the last commit.

    A cherry-pick brings the source line's copy of the project files a
    commit adds; the line takes its own (its generation's adapter), as
    build does, so refresh finds nothing to write back.
    """
    if not entry.files:
        return
    build.add_files(tree, entry)
    if gitutils.git(tree, 'diff', '--cached', '--quiet',
                    check=False).returncode:
        gitutils.git(tree, 'commit', '-q', '--amend', '--no-edit')
