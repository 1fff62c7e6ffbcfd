"""Run git the same way on every machine.

The user's and the system's git configuration are ignored and commits get
a fixed identity and date, so that the same inputs always give the same
commit ids.
"""

import os
import re
import subprocess

from nova_fork import errors

NAME = 'Nova PCI fork'
EMAIL = 'nova-pci-fork@example.org'
DATE = '2026-12-02T12:00:00+0000'

IDENT_RE = re.compile(r'^(?P<who>.*<[^<>]*>) \d+ [+-]\d{4}$')
SET_IDENTITY = ('git config --global user.name "Your Name"; git config '
                '--global user.email you@example.org')

FORMAT_PATCH_FLAGS = (
    '--no-renames', '--no-signature', '-N', '--zero-commit', '--abbrev=12',
    '--stat=80', '--summary',
)


def environ():
    env = dict(os.environ)
    for key in list(env):
        if key.startswith('GIT_'):
            del env[key]
    env.update({
        'GIT_CONFIG_NOSYSTEM': '1',
        'GIT_CONFIG_GLOBAL': os.devnull,
        'GIT_AUTHOR_NAME': NAME,
        'GIT_AUTHOR_EMAIL': EMAIL,
        'GIT_AUTHOR_DATE': DATE,
        'GIT_COMMITTER_NAME': NAME,
        'GIT_COMMITTER_EMAIL': EMAIL,
        'GIT_COMMITTER_DATE': DATE,
        'LC_ALL': 'C',
    })
    return env


def git(cwd, *args, check=True, input=None):
    """Run git in cwd and return its completed process (text mode)."""
    try:
        # trees unpacked from an sdist may belong to the sdist's uid
        proc = subprocess.run(
            ('git', '-c', 'safe.directory=*') + args, cwd=cwd, env=environ(),
            input=input,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except FileNotFoundError:
        raise errors.UsageError('git is not installed: install git first')
    if check and proc.returncode:
        raise errors.ForkError('git %s failed in %s: %s' % (
            ' '.join(args), cwd, (proc.stderr or proc.stdout).strip()))
    return proc


def conflicts(cwd):
    """The files git left in conflict in cwd (an am, a cherry-pick)."""
    return out(cwd, 'diff', '--name-only', '--diff-filter=U').split()


def out(cwd, *args):
    return git(cwd, *args).stdout.strip()


def user_identity(cwd=None):
    """('Name <email>' or None, what git said): the user's own identity.

    As git resolves it for a commit of theirs in cwd: their configuration
    (local, global, system) and GIT_AUTHOR_* count; an identity git would
    only guess from the host does not.
    """
    try:
        proc = subprocess.run(
            ('git', '-c', 'user.useConfigOnly=true', 'var',
             'GIT_AUTHOR_IDENT'), cwd=cwd or os.getcwd(),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except FileNotFoundError:
        raise errors.UsageError('git is not installed: install git first')
    match = IDENT_RE.match(proc.stdout.strip())
    if proc.returncode or not match:
        said = [s.strip() for s in proc.stderr.splitlines() if s.strip()]
        return None, said[-1] if said else 'nothing'
    return match.group('who'), None


def user_config(key, cwd=None):
    """The value of key in the user's own git configuration, or ''.

    As git reads it for a command of theirs in cwd (local, global and
    system configuration), unlike git(), which ignores theirs.
    """
    try:
        proc = subprocess.run(
            ('git', 'config', '--get', key), cwd=cwd or os.getcwd(),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except FileNotFoundError:
        raise errors.UsageError('git is not installed: install git first')
    return proc.stdout.strip() if proc.returncode == 0 else ''


def author(cwd=None):
    """(author for exported patches or None, what to say of it).

    The user's git identity; None (the commits' own author) without one.
    """
    who, _ = user_identity(cwd)
    if who:
        return who, 'author: %s, your git identity' % who
    return None, ('author: the commits\' own, as no git identity is set '
                  '(%s)' % SET_IDENTITY)
