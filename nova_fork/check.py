"""Say whether a nova release already has the fix, by trying our patches."""

import pathlib
import tempfile

from nova_fork import build
from nova_fork import detect
from nova_fork import errors
from nova_fork import fetch


def _major(version):
    return int(version.split('.')[0])


def pick_base(bases, version):
    """The base of the same major release, else the newest base."""
    same = [b for b in bases.values() if _major(b.nova) == _major(version)]
    if same:
        return same[0]
    return max(bases.values(),
               key=lambda b: tuple(int(p) for p in b.nova.split('.')))


def check(base, version):
    """Return (needs_fix, lines) for nova VERSION against base's fixes."""
    sha256 = base.sha256 if version == base.nova else None
    sdist = fetch.fetch(base.root, version, sha256)
    lines = []
    verdicts = []
    lacking = []
    with tempfile.TemporaryDirectory() as tmp:
        tree = pathlib.Path(tmp) / 'nova'
        build.import_sdist(sdist, tree, version, fetch.sha256sum(sdist))
        for commit in base.commits():
            if not commit.is_fix:
                continue
            verdict, detail = detect.classify(tree, commit)
            verdicts.append(verdict)
            lines.append('  %s: %s' % (commit.name, detail))
            if verdict == detect.NEEDS:
                lacking.append(commit.name)
    if detect.BROKEN in verdicts and detect.HAS not in verdicts:
        raise errors.PatchError('cannot tell whether nova %s has the fix: %s'
                                % (version, '; '.join(
                                    line.strip() for line, v in
                                    zip(lines, verdicts)
                                    if v == detect.BROKEN)))
    needs = all(v == detect.NEEDS for v in verdicts)
    if needs:
        lines.insert(0, 'nova %s needs the fix for bug 1860555: the %s '
                        'series applies' % (version, base.series))
    elif lacking:
        # e.g. a release with upstream's build-path fix but not the fork's
        # move claim fix: build refuses it, say what it still lacks.
        lines.insert(0, 'nova %s already has part of the fix for bug '
                        '1860555 but lacks %s of the %s series'
                        % (version, ', '.join(lacking), base.series))
    else:
        lines.insert(0, 'nova %s already has the fix for bug 1860555'
                        % version)
    return needs, lines
