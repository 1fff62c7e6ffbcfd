"""A suite's own Python stack, and nova's tests run on it.

The suite's Debian root (env/chroot.py) gets nova's build dependencies from
the suite (apt-get build-dep nova: what Debian's build runs the unit tests
with) and python3-placement (the functional tests' placement service),
once; a stamp names the source version they were installed for.  The
project is bind-mounted at its own path, so the trees under .cache/debian
are run in place with the suite's python3 and stestr.
"""

import json
import os
import re
import shlex
import subprocess

from nova_fork import config
from nova_fork.debian import archive
from nova_fork.env import chroot
from nova_fork import errors
from nova_fork.proof import prove
from nova_fork.tree import gitutils

STAMP = '.nova-fork-debian-stack'
EXTRA = ('python3-placement',)
POLICY = '#!/bin/sh\n# no daemon starts in a root made for tests\nexit 101\n'


def sources_list(suite):
    """deb and deb-src lines for the suite's three pockets.

    >>> print(sources_list('trixie').splitlines()[-1])
    deb-src http://deb.debian.org/debian-security trixie-security main
    """
    lines = []
    for archive_name, pocket in archive.POCKETS:
        for kind in ('deb', 'deb-src'):
            lines.append('%s %s%s %s main' % (kind, archive.MIRROR,
                                              archive_name, pocket % suite))
    return '\n'.join(lines) + '\n'


def _apt(target, root, args, what):
    env = {'PATH': '/usr/sbin:/usr/bin:/sbin:/bin',
           'DEBIAN_FRONTEND': 'noninteractive', 'LC_ALL': 'C.UTF-8'}
    proc = chroot.run(chroot.command(target, ['apt-get'] + args, '/'),
                      env=env, stdout=subprocess.PIPE,
                      stderr=subprocess.STDOUT, text=True)
    if proc.returncode:
        lines = [s for s in proc.stdout.splitlines() if s.strip()]
        raise errors.ForkError('%s in the Debian root failed: %s' % (
            what, ' / '.join(lines[-2:])))


def provision(root, suite, source, say=print):
    """The suite's root with nova's build dependencies; its path."""
    python = chroot.SUITES[suite][-1]
    target = chroot.provision(root, suite, python)
    want = '%s %s\n' % (source.current.version, ' '.join(EXTRA))
    stamp = target / STAMP
    if stamp.is_file() and stamp.read_text() == want:
        return target
    say('  installing nova\'s build dependencies from Debian %s into %s'
        % (suite, target.relative_to(root)))
    (target / 'etc' / 'apt' / 'sources.list').write_text(
        sources_list(suite))
    policy = target / 'usr' / 'sbin' / 'policy-rc.d'
    policy.write_text(POLICY)
    policy.chmod(0o755)
    install = ['-y', '-q', '--no-install-recommends']
    with chroot.mounted(target, root):
        _apt(target, root, ['update', '-q'], 'apt-get update')
        _apt(target, root, ['build-dep'] + install + [archive.SOURCE],
             'apt-get build-dep nova')
        _apt(target, root, ['install'] + install + list(EXTRA),
             'apt-get install %s' % ' '.join(EXTRA))
    stamp.write_text(want)
    return target


def environ(source, base):
    env = {'PATH': '/usr/sbin:/usr/bin:/sbin:/bin', 'HOME': '/root',
           'LC_ALL': 'C.UTF-8', 'PBR_VERSION': source.upstream,
           'OS_STDOUT_CAPTURE': '1', 'OS_STDERR_CAPTURE': '1',
           'OS_LOG_CAPTURE': '1', 'OS_TEST_TIMEOUT': '160',
           'PYTHONDONTWRITEBYTECODE': '1'}
    env.update(base.setenv)
    if os.environ.get('OS_TEST_TIMEOUT'):
        env['OS_TEST_TIMEOUT'] = os.environ['OS_TEST_TIMEOUT']
    return env


def run(target, root, tree, path, filters, env):
    """stestr run in tree inside the root; [record] of its results."""
    cmd = ['stestr', '--test-path', path, 'run', '--subunit'] + filters
    with chroot.mounted(target, root):
        proc = chroot.run(chroot.command(target, cmd, tree), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        summary = chroot.run(
            chroot.command(target, ['python3', str(prove.SUMMARY_SCRIPT)],
                           tree),
            input=proc.stdout, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE)
    if summary.returncode or not summary.stdout.strip():
        raise errors.TestFailure(
            'stestr gave no results in %s: %s' % (tree, (
                proc.stderr or summary.stderr).decode(errors='replace')
                .strip().splitlines()[-1:]))
    records = [json.loads(line)
               for line in summary.stdout.decode().splitlines()]
    return [r for r in records if r['status'] != 'exists']


def debian_filter(tree):
    """The unit test selection of Debian's build, or None.

    pkgos-dh_auto_test's regular expression in debian/rules.
    """
    rules = tree / 'debian' / 'rules'
    if not rules.is_file():
        return None
    for line in rules.read_text().splitlines():
        if 'pkgos-dh_auto_test' in line:
            words = [w for w in shlex.split(line.strip())
                     if not w.startswith('-')]
            if len(words) > 1:
                return words[-1]
    return None


def worktree(tree, branch, name):
    path = tree.parent / ('%s.%s' % (tree.name, name))
    gitutils.git(tree, 'worktree', 'remove', '-f', str(path), check=False)
    gitutils.git(tree, 'worktree', 'prune')
    gitutils.git(tree, 'worktree', 'add', '-q', '-f', '--detach', str(path),
                 branch)
    return path


def prove_units(target, root, source, base, tree, say):
    """3. The unit tests of the touched modules, with the series.

    As Debian's build runs them: its selection, the suite's packages.
    """
    wanted = '(?:%s)' % '|'.join(re.escape(m) + r'\b' for m in base.unit_tests)
    own = debian_filter(tree)
    regex = '^(?=.*(?:%s))%s' % (own, wanted) if own else '^' + wanted
    records = run(target, root, tree, './nova/tests/unit', [regex],
                  environ(source, base))
    failed = [r['id'] for r in records
              if r['status'] not in ('success', 'skip')]
    passed = sum(r['status'] == 'success' for r in records)
    if failed or not passed:
        raise errors.TestFailure(
            '3. unit tests with the series on Debian %s: %d of %d fail (%s)'
            % (source.suite, len(failed), len(records),
               ', '.join(failed[:3])))
    say('  3. unit tests of %s on Debian %s\'s stack, with Debian\'s '
        'selection: %d passed, %d skipped' % (
            ', '.join(m.rsplit('.', 1)[-1] for m in base.unit_tests),
            source.suite, passed, len(records) - passed))


def prove_regression(target, root, source, base, tree, lacking, say):
    """4. The regression tests fail without the series, pass with it.

    Without it, each test a unit the package lacks affects must fail for
    the bug's reason.
    """
    bug = config.load_bug(root)
    rows = {}
    for column, branch in (('pristine', 'debian-tests'),
                           ('fork', 'series-tests')):
        path = worktree(tree, branch, branch)
        records = run(target, root, path, './nova/tests/functional',
                      list(base.regression), environ(source, base))
        for record in records:
            rows.setdefault(prove.short_id(base, record['id']), {})[
                column] = (record['id'], prove.classify(record, bug),
                           record['duration'])
    problems = prove.reproduce_problems(base, rows, lacking)
    failing = [c['pristine'][1] for c in rows.values()
               if prove.is_bug_failure(c.get('pristine', ('', '', ''))[1])]
    passing = sum(c.get('fork', ('', '', ''))[1] == prove.PASS
                  for c in rows.values())
    if problems:
        raise errors.TestFailure(
            '4. regression tests on Debian %s: %s' % (
                source.suite, '; '.join(problems[:3])))
    labels = sorted(set(failing))
    say('  4. regression tests on Debian %s\'s stack (python3-placement): '
        'without the series %d of %d fail for the bug (%s), with it %d of '
        '%d pass' % (source.suite, len(failing), len(rows),
                     ', '.join('%d %s' % (failing.count(label), label[6:-1])
                               for label in labels), passing, len(rows)))


def check(root, suite, source, base, tree, lacking, say=print):
    """Checks 3 and 4 in the suite's root."""
    target = provision(root, suite, source, say)
    prove_units(target, root, source, base, tree, say)
    prove_regression(target, root, source, base, tree, lacking, say)
