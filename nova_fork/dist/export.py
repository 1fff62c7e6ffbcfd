"""Export a fork as a git format-patch series, checked with git am."""

import pathlib
import re
import shutil
import tempfile

from nova_fork import config
from nova_fork.dist import quilt
from nova_fork import errors
from nova_fork import progress
from nova_fork.tree import build
from nova_fork.tree import cherrypick
from nova_fork.tree import gitutils


def dist_dir(root, series):
    return pathlib.Path(root) / 'dist' / series


def format_patch(tree, since, outdir, author=None):
    """git format-patch of SINCE..HEAD; AUTHOR, when given, is each From.

    The fork's commits carry a fixed identity, so that their ids do not
    depend on who builds them; an export names the user who ships it.
    """
    gitutils.git(tree, 'format-patch', '-q', *gitutils.FORMAT_PATCH_FLAGS,
                 '-o', str(outdir), '%s..HEAD' % since)
    patches = sorted(outdir.glob('*.patch'))
    for patch in patches if author else ():
        head, blank, rest = patch.read_text().partition('\n\n')
        head = re.sub(r'^From: .*$', lambda _: 'From: %s' % author, head,
                      count=1, flags=re.M)
        patch.write_text(head + blank + rest)
    return patches


def verify(tree, tag, patches):
    """git am the patches onto a clone of the pristine import.

    The result must be the fork's own tree, byte for byte.
    """
    with tempfile.TemporaryDirectory() as tmp:
        clone = pathlib.Path(tmp) / 'clone'
        gitutils.git(tree, 'clone', '-q', '--no-checkout', str(tree),
                     str(clone))
        gitutils.git(clone, 'checkout', '-q', '--detach', tag)
        for patch in patches:
            proc = gitutils.git(clone, 'am', '-q', str(patch), check=False)
            if proc.returncode:
                raise errors.PatchError(
                    'exported %s does not git am onto nova %s: %s' % (
                        patch.name, tag, (proc.stderr or proc.stdout).strip()))
        want = gitutils.out(tree, 'rev-parse', 'HEAD^{tree}')
        got = gitutils.out(clone, 'rev-parse', 'HEAD^{tree}')
        if want != got:
            raise errors.PatchError(
                'exported series does not reproduce the fork: tree %s, '
                'expected %s' % (got, want))


def export(base, quilt_only=None):
    """Write the fork's commits to dist/SERIES/ and return that folder.

    quilt_only: the releases the quilt series is pushed onto, instead of
    every release bases.ini lists for the line that takes it.
    """
    tree = build.build(base)
    if quilt_only is None and (
            base.nova not in base.listed or
            any(base.is_own(c) for c in base.commits(check_files=False))):
        # a series of its own (its context moved, or it has its own
        # backport): the release it is for is the one it must push onto
        quilt_only = [base.nova]
    dest = dist_dir(base.root, base.label)
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.parent / ('.%s.partial' % base.label)
    shutil.rmtree(partial, ignore_errors=True)
    try:
        if base.backport_of:
            cherrypick.check(base, tree)
        author, said = gitutils.author(base.root)
        progress.say(said)
        step = progress.Step()
        patches = format_patch(tree, base.nova, partial, author)
        verify(tree, base.nova, patches)
        step.done('git am: %d patch%s onto nova %s give the fork\'s tree' % (
            len(patches), '' if len(patches) == 1 else 'es', base.nova))
        if base.quilt:
            quilt.write_series(tree, base.nova, partial / 'quilt',
                               config.load_bug(base.root), author)
            quilt.verify(base, partial / 'quilt', quilt_only)
        if dest.exists():
            shutil.rmtree(dest)
        partial.rename(dest)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return dest
