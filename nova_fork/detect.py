"""Tell whether a tree already carries a fix, by trying the fix's patch."""

import re

from nova_fork import gitutils

FAILED_RE = re.compile(r'patch failed: (?P<file>\S+?):(?P<line>\d+)')
DIFF_RE = re.compile(r'^diff --git a/(\S+) b/(\S+)$')
HUNK_RE = re.compile(r'^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@(.*)$')

NEEDS = 'needs'
HAS = 'has'
BROKEN = 'broken'


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


def split_hunks(patch_text):
    """Split a patch into one small patch per hunk.

    Returns (path, index, header, text) tuples, so that each hunk can be
    tried with git apply on its own.

    >>> [h[:3] for h in split_hunks(
    ...     'diff --git a/x b/x\\n--- a/x\\n+++ b/x\\n@@ -1 +1 @@\\n-a\\n'
    ...     '+b\\n@@ -9 +9 @@ f\\n-c\\n+d\\n')]
    [('x', 1, '@@ -1 +1 @@'), ('x', 2, '@@ -9 +9 @@ f')]
    """
    hunks = []
    path, head, current = None, [], None
    for line in patch_text.splitlines(keepends=True):
        match = DIFF_RE.match(line.rstrip('\n'))
        if match:
            path, head, current = match.group(2), [line], None
            continue
        if path is None:
            continue
        if line.startswith('@@'):
            current = [line]
            hunks.append((path, head, current))
        elif current is not None:
            if line == '-- \n':
                # the signature that ends a git format-patch mail
                path, current = None, None
                continue
            current.append(line)
        else:
            head.append(line)
    result = []
    counts = {}
    for path, head, body in hunks:
        counts[path] = counts.get(path, 0) + 1
        result.append((path, counts[path], body[0].strip(),
                       ''.join(head + body)))
    return result


def _applies(tree, text, reverse=False):
    args = ['apply', '--check']
    if reverse:
        args.append('--reverse')
    return gitutils.git(tree, *(args + ['-']), check=False,
                        input=text).returncode == 0


def classify(tree, commit):
    """Classify a fix commit against a tree, hunk by hunk.

    Returns (verdict, detail): NEEDS when every code hunk of the patch
    applies; HAS when at least one code hunk is already there (it applies
    in reverse), whatever the others do; BROKEN, naming the files and
    hunks, when a hunk applies neither way and none is there.
    """
    present, missing, broken = [], [], []
    for path, index, header, text in split_hunks(commit.path.read_text()):
        if not is_code(path):
            continue
        name = '%s hunk %d (%s)' % (path, index, header)
        if _applies(tree, text):
            missing.append(name)
        elif _applies(tree, text, reverse=True):
            present.append(name)
        else:
            broken.append(name)
    if present:
        detail = 'already carries %s' % ', '.join(present)
        if missing or broken:
            detail += '; differs in %s' % ', '.join(missing + broken)
        return HAS, detail
    if not broken:
        return NEEDS, 'applies'
    return BROKEN, 'does not apply: %s' % ', '.join(broken)
