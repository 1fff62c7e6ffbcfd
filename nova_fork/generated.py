"""The tables the commands write for the docs (doc/source/generated/).

Each fragment names the project's commit it was measured at (``git
describe --always``), so it is written only from a checkout whose
tracked files are that commit's: one with changes to tracked files other
than the fragments themselves is refused (``refuse_dirty``), with one
line naming them, before anything is written.  Untracked files (build/,
.venvs/) do not count.
"""

import os
import pathlib

from nova_fork import errors
from nova_fork.tree import gitutils

# the folder of the fragments, relative to the project
FOLDER = pathlib.Path('doc', 'source', 'generated')


def _git(root, *args):
    return gitutils.git(root, *args, check=False)


def dirty_files(root):
    """The tracked files that differ from HEAD, but the fragments'.

    None when root is not a git checkout.
    """
    proc = _git(root, 'status', '--porcelain', '--untracked-files=no',
                '--', '.', ':(exclude)%s' % FOLDER.as_posix())
    if proc.returncode:
        return None
    # "XY path" or "XY old -> new"
    return sorted(line[3:].split(' -> ')[-1]
                  for line in proc.stdout.splitlines() if line.strip())


def commit_of(root):
    """The project's commit, as git describe gives it.

    -dirty when the checkout has changes to tracked files, other than the
    generated ones.
    """
    proc = _git(root, 'describe', '--always', '--abbrev=12')
    if proc.returncode:
        return 'unknown (not a git checkout)'
    return proc.stdout.strip() + ('-dirty' if dirty_files(root) else '')


def refuse_dirty(root, inc, then='', doing=None):
    """Raise DirtyCheckout when the checkout has changes; its commit.

    inc: the fragment that is not written (for the message); then: what
    to run once the changes are committed; doing: what is refused, if not
    writing inc.
    """
    dirty = dirty_files(root)
    if dirty:
        shown = ', '.join(dirty[:3]) + (
            ' and %d more' % (len(dirty) - 3) if len(dirty) > 3 else '')
        raise errors.DirtyCheckout(
            '%s: the checkout has uncommitted changes (%s), and a table of '
            'the docs names the commit it was made at; commit them first%s'
            % (doing or 'not writing %s' % pathlib.PurePath(inc).as_posix(),
               shown, then))
    return commit_of(root)


def write(root, text, inc):
    """Write the fragment inc (whole or not at all); its path."""
    path = pathlib.Path(root) / inc
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name('.%s.partial-%d' % (path.name, os.getpid()))
    partial.write_text(text)
    partial.replace(path)
    return path
