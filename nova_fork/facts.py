"""Plain facts that config and the layers below it share.

config reads bases.ini and is read by every layer; tree/ and env/ do the
work.  The few facts both need live here, as data, so that config imports
nothing from tree/ or env/ (nova_fork/tests/test_imports.py checks it),
and this module imports nothing of the project.
"""

import re

# The Debian suites a line's interpreter can come from (runtime
# debian:SUITE), and the interpreters each packages; the last one is its
# python3.
SUITES = {
    'bullseye': ('python2.7', 'python3.9'),
    'bookworm': ('python3.11',),
    'trixie': ('python3.13',),
}

# The header of each file a git patch changes: a/OLD b/NEW.
DIFF_RE = re.compile(r'^diff --git a/(\S+) b/(\S+)$')


def version_key(version):
    """'34.0.0' as (34, 0, 0), for sorting final releases.

    >>> sorted(['9.1.0', '34.0.0', '18.2.2'], key=version_key)
    ['9.1.0', '18.2.2', '34.0.0']
    """
    return tuple(int(p) for p in version.split('.'))


def changed_files(patch_text):
    """The paths a git patch changes, in its order.

    >>> changed_files('diff --git a/x.py b/x.py\\n@@ -1 +1 @@\\n'
    ...               'diff --git a/y b/z\\n')
    ['x.py', 'z']
    """
    matches = map(DIFF_RE.match, patch_text.splitlines())
    return [match.group(2) for match in matches if match]
