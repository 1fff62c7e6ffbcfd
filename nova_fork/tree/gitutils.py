"""Run git the same way on every machine.

The user's and the system's git configuration are ignored and commits get
a fixed identity and date, so that the same inputs always give the same
commit ids.
"""

import os
import subprocess

from nova_fork import errors

NAME = 'Nova PCI fork'
EMAIL = 'nova-pci-fork@example.org'
DATE = '2026-12-02T12:00:00+0000'

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


def out(cwd, *args):
    return git(cwd, *args).stdout.strip()
