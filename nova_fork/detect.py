"""Tell whether a tree already carries a fix, by trying the fix's patch."""

import re

from nova_fork import errors
from nova_fork import gitutils

FAILED_RE = re.compile(r'patch failed: (?P<file>\S+?):(?P<line>\d+)')
DIFF_RE = re.compile(r'^diff --git a/(\S+) b/(\S+)$')
HUNK_RE = re.compile(r'^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@(.*)$')

NEEDS = 'needs'
HAS = 'has'


def is_code(path):
    """Upstream code a fix changes, as opposed to tests and notes."""
    return path.startswith('nova/') and not path.startswith('nova/tests/')


def patch_files(patch_text):
    """Return {path: [(old_start, header), ...]} for the files a patch changes.

    >>> patch_files('diff --git a/x.py b/x.py\\n@@ -3,2 +3,3 @@ def f\\n')
    {'x.py': [(3, '@@ -3,2 +3,3 @@ def f')]}
    """
    files = {}
    current = None
    for line in patch_text.splitlines():
        match = DIFF_RE.match(line)
        if match:
            current = files.setdefault(match.group(2), [])
            continue
        match = HUNK_RE.match(line)
        if match and current is not None:
            current.append((int(match.group(1)), line))
    return files


def describe_failure(patch_text, stderr):
    """Name the file and hunk that git apply or git am choked on."""
    match = FAILED_RE.search(stderr)
    if not match:
        lines = [s for s in stderr.splitlines() if s.strip()]
        return lines[-1] if lines else 'git could not apply it'
    path, line = match.group('file'), int(match.group('line'))
    hunks = patch_files(patch_text).get(path, [])
    for index, (start, header) in enumerate(hunks, start=1):
        if start == line:
            return '%s, hunk %d of %d (%s)' % (
                path, index, len(hunks), header.strip())
    return '%s, the hunk at line %d' % (path, line)


def _applies(tree, patch, path, reverse=False):
    args = ['apply', '--check', '--include=%s' % path]
    if reverse:
        args.append('--reverse')
    return gitutils.git(tree, *(args + [str(patch)]), check=False)


def classify(tree, commit):
    """Classify a fix commit against a tree.

    Returns (verdict, detail): NEEDS when every code file of the patch
    applies, HAS when the code files apply in reverse (the change is
    already there) or when some do and the others no longer apply.  Raises
    PatchError, naming the file and hunk, when no code file applies either
    way.
    """
    text = commit.path.read_text()
    code = [p for p in patch_files(text) if is_code(p)]
    forward, reverse, neither = [], [], []
    for path in code:
        proc = _applies(tree, commit.path, path)
        if proc.returncode == 0:
            forward.append(path)
        elif _applies(tree, commit.path, path, reverse=True).returncode == 0:
            reverse.append(path)
        else:
            neither.append((path, describe_failure(text, proc.stderr)))
    if code and len(forward) == len(code):
        return NEEDS, 'applies'
    if reverse and not forward:
        return HAS, 'already carries the change to %s' % ', '.join(reverse)
    detail = '; '.join(d for _, d in neither) or ', '.join(forward)
    raise errors.PatchError(
        '%s does not apply: %s' % (commit.name, detail))
