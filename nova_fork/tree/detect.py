"""Read patches: the files and hunks they change, and where git choked."""

import re

from nova_fork import facts

FAILED_RE = re.compile(r'patch failed: (?P<file>\S+?):(?P<line>\d+)')
HUNK_RE = re.compile(r'^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@(.*)$')


def patch_files(patch_text):
    """Return {path: [(old_start, header), ...]} for the files a patch changes.

    >>> patch_files('diff --git a/x.py b/x.py\\n@@ -3,2 +3,3 @@ def f\\n')
    {'x.py': [(3, '@@ -3,2 +3,3 @@ def f')]}
    """
    files = {}
    current = None
    for line in patch_text.splitlines():
        match = facts.DIFF_RE.match(line)
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
