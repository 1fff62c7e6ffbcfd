import io
import json
import os
import pathlib
import re
import sys

import fixtures
import subunit
import testtools

from nova_fork import config
from nova_fork.env import novatox
from nova_fork import errors
from nova_fork.proof import gate
from nova_fork.tests import fakes

ROCKY = '''[tox]
envlist = py{27,35},functional,pep8

[testenv]
whitelist_externals = bash
passenv =
  OS_DEBUG GENERATE_HASHES
'''


# the test methods the fake release defines
UPSTREAM = ('test_ok', 'test_upstream', 'test_ours', 'test_skip')


def stream(statuses):
    """A subunit v2 stream in which each test ends with its status."""
    out = io.BytesIO()
    writer = subunit.StreamResultToBytes(out)
    for test_id, status in statuses.items():
        writer.status(test_id=test_id, test_status='inprogress')
        writer.status(test_id=test_id, test_status=status)
    return out.getvalue()


def add_run(tree, statuses):
    """A run in the tree's stestr repository, as stestr keeps it."""
    folder = pathlib.Path(tree) / '.stestr'
    folder.mkdir(exist_ok=True)
    number = gate.next_run(tree)
    (folder / str(number)).write_bytes(stream(statuses))
    (folder / 'next-stream').write_text('%d\n' % (number + 1))


def make_tree(root, name, text=ROCKY):
    """A git tree with a tox.ini, and a tox env whose python has subunit."""
    tree = pathlib.Path(root) / name
    tree.mkdir()
    (tree / 'tox.ini').write_text(text)
    (tree / 'name').write_text(name)
    # the release's own tests (the first commit is the release's import)
    tests = tree / 'nova' / 'tests'
    tests.mkdir(parents=True)
    (tests / 'test_u.py').write_text(''.join(
        '    def %s(self):\n        pass\n' % method
        for method in UPSTREAM))
    fakes.git(tree, 'init', '-q')
    fakes.git(tree, 'add', '-A')
    fakes.git(tree, 'commit', '-qm', name)
    python = tree / '.tox' / 'py27' / 'bin' / 'python'
    python.parent.mkdir(parents=True)
    # the tests' own python, which has subunit (stestr's)
    python.write_text('#!/bin/sh\nexec %s "$@"\n' % sys.executable)
    python.chmod(0o755)
    return tree


class StepsTest(testtools.TestCase):

    def test_options(self):
        self.assertEqual(['pep8', 'releasenotes'],
                         gate.parse_only('releasenotes,pep8'))
        self.assertEqual(list(gate.STEPS), gate.parse_only(None))
        self.assertRaises(errors.UsageError, gate.parse_only, 'py3')
        self.assertEqual({'unit': 'a b'}, gate.parse_selections(['unit=a b']))
        self.assertRaises(errors.UsageError, gate.parse_selections,
                          ['pep8=x'])
        self.assertRaises(errors.UsageError, gate.tox_args, 'pep8', 'fast8',
                          'x')

    def test_envs_of_tox3_and_tox4(self):
        # a tox 3 era tree: nova's own pep8 and its unit env for the line
        self.assertEqual(['-e', 'pep8'], gate.tox_args('pep8', gate.env_of(
            'pep8', True, 'py27')))
        self.assertEqual(['-e', 'py38', '--', 'test_claims'], gate.tox_args(
            'unit', gate.env_of('unit', True, 'py38'), 'test_claims'))
        self.assertEqual('fast8', gate.env_of('pep8', False, 'py3'))


class StreamTest(testtools.TestCase):

    def test_the_runs_of_the_step(self):
        root = self.useFixture(fixtures.TempDir()).path
        tree = make_tree(root, 'rocky')
        self.assertEqual(0, gate.next_run(tree))
        add_run(tree, {'m.T.test_old': 'fail'})
        first = gate.next_run(tree)
        # the suite, then the profiler test combined: two streams here
        add_run(tree, {'m.T.test_a': 'success', 'm.T.test_b': 'fail',
                       'm.T.test_c': 'skip', 'm.test_profiler.T.t': 'skip'})
        add_run(tree, {'m.test_profiler.T.t': 'success'})
        statuses = gate.read_stream(tree, 'functional',
                                    gate.streams_since(tree, first))
        self.assertEqual({'m.T.test_a': 'success', 'm.T.test_b': 'fail',
                          'm.T.test_c': 'skip',
                          'm.test_profiler.T.t': 'success'}, statuses)
        self.assertEqual({'run': 4, 'passed': 2, 'failed': 1, 'skipped': 1},
                         gate.counts(statuses))
        self.assertEqual(['m.T.test_b'], gate.failed_ids(statuses))
        self.assertEqual({}, gate.read_stream(tree, 'py27', b''))

    def test_no_python_with_subunit(self):
        root = self.useFixture(fixtures.TempDir()).path
        tree = make_tree(root, 'rocky')
        (tree / '.tox' / 'py27' / 'bin' / 'python').unlink()
        self.assertRaises(errors.ForkError, gate.read_stream, tree, 'py27',
                          stream({'a.b': 'fail'}))


class ClassifyTest(testtools.TestCase):

    def test_shared_and_ours(self):
        shared, ours = gate.classify(
            ['a.shared', 'a.ours', 'a.gone', 'a.skipped'],
            {'a.shared': 'fail', 'a.ours': 'success', 'a.skipped': 'skip'})
        self.assertEqual((['a.shared'], ['a.ours', 'a.gone', 'a.skipped']),
                         (shared, ours))

    def test_failed(self):
        unit = {'step': 'unit', 'exit': 1, 'failed': ['a']}
        self.assertFalse(gate.failed(dict(unit, shared=['a'], ours=[])))
        self.assertTrue(gate.failed(dict(unit, shared=[], ours=['a'])))
        # not told: the pristine run gave no results
        self.assertTrue(gate.failed(dict(unit, shared=None, ours=None)))
        # no test ran (tox stopped before)
        self.assertTrue(gate.failed({'step': 'unit', 'exit': 1,
                                     'failed': []}))
        self.assertFalse(gate.failed({'step': 'pep8', 'exit': 0}))

    def test_has_results(self):
        self.assertFalse(gate.has_results({'step': 'unit', 'exit': 1,
                                           'tests': {'run': 0}}))
        self.assertTrue(gate.has_results({'step': 'unit', 'exit': 1,
                                          'tests': {'run': 1}}))
        self.assertTrue(gate.has_results({'step': 'pep8', 'exit': 1,
                                          'findings': 3}))
        self.assertFalse(gate.has_results({'step': 'pep8', 'exit': 1,
                                           'findings': 0}))
        self.assertFalse(gate.has_results({'step': 'releasenotes',
                                           'exit': 2}))


class CacheKeyTest(testtools.TestCase):

    def test_tree_lock_step_env_and_selection(self):
        key = gate.cache_key('c0ffee', 'six==1\n', 'unit', 'py27')
        self.assertEqual(key, gate.cache_key('c0ffee', 'six==1\n', 'unit',
                                             'py27'))
        others = {
            gate.cache_key('c0ffef', 'six==1\n', 'unit', 'py27'),
            gate.cache_key('c0ffee', 'six==2\n', 'unit', 'py27'),
            gate.cache_key('c0ffee', 'six==1\n', 'functional', 'py27'),
            gate.cache_key('c0ffee', 'six==1\n', 'unit', 'py38'),
            gate.cache_key('c0ffee', 'six==1\n', 'unit', 'py27', 'x'),
            gate.cache_key('c0ffee', 'six==1\n', 'unit', 'py27',
                           ids=['x']),
        }
        self.assertEqual(6, len(others))
        self.assertNotIn(key, others)
        # the ids are a set: their order is not the key's
        self.assertEqual(
            gate.cache_key('c', 'l', 'unit', 'py27', ids=['a', 'b']),
            gate.cache_key('c', 'l', 'unit', 'py27', ids=['b', 'a']))

    def test_a_tree_with_changes_is_not_cached(self):
        root = self.useFixture(fixtures.TempDir()).path
        tree = make_tree(root, 'rocky')
        head = fakes.git(tree, 'rev-parse', 'HEAD^{tree}').strip()
        self.assertEqual(head, gate.tree_head(tree))
        # untracked files (.tox, .stestr) are not changes
        add_run(tree, {'a.b': 'success'})
        self.assertEqual(head, gate.tree_head(tree))
        # nor what a develop install writes over the sdist's copies
        for name in ('nova.egg-info/PKG-INFO', 'AUTHORS'):
            (tree / name).parent.mkdir(exist_ok=True)
            (tree / name).write_text('sdist\n')
            fakes.git(tree, 'add', name)
        fakes.git(tree, 'commit', '-qm', 'sdist')
        head = fakes.git(tree, 'rev-parse', 'HEAD^{tree}').strip()
        (tree / 'nova.egg-info' / 'PKG-INFO').write_text('develop\n')
        (tree / 'AUTHORS').write_text('develop\n')
        self.assertEqual(head, gate.tree_head(tree))
        (tree / 'tox.ini').write_text('[tox]\n')
        self.assertIsNone(gate.tree_head(tree))

    def test_a_new_message_keeps_the_records(self):
        # a backport whose "(cherry picked from commit X)" line changed
        root = self.useFixture(fixtures.TempDir()).path
        tree = make_tree(root, 'rocky')
        head = gate.tree_head(tree)
        fakes.git(tree, 'commit', '-q', '--amend', '-m',
                  'Fix\n\n(cherry picked from commit %s)' % ('a' * 40))
        self.assertEqual(head, gate.tree_head(tree))
        (tree / 'tox.ini').write_text('[tox]\n')
        fakes.git(tree, 'commit', '-qam', 'tox')
        self.assertNotEqual(head, gate.tree_head(tree))


class GateTest(testtools.TestCase):
    """gate.gate with tox faked: the stestr runs it leaves, the cache."""

    # {tree name: {env: statuses of a run of every test}}
    RESULTS = {
        'fork': {'py27': {'u.T.test_ok': 'success',
                          'u.T.test_upstream': 'fail',
                          'u.T.test_ours': 'fail',
                          'u.T.test_skip': 'skip'},
                 'functional': {'f.T.test_ok': 'success'}},
        'pristine': {'py27': {'u.T.test_ok': 'success',
                              'u.T.test_upstream': 'fail',
                              'u.T.test_ours': 'success',
                              'u.T.test_skip': 'skip'},
                     'functional': {'f.T.test_ok': 'success'}},
    }

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        self.base = config.get_base(self.project.root, 'fake')
        self.base.lock.parent.mkdir(parents=True, exist_ok=True)
        self.base.lock.write_text('six==1.16.0\n')
        work = self.useFixture(fixtures.TempDir()).path
        self.trees = {name: make_tree(work, name)
                      for name in ('fork', 'pristine')}
        self.calls = []
        # the ids of each run with a --load-list
        self.loaded = []
        self.useFixture(fixtures.MockPatchObject(
            novatox, 'prepare', side_effect=self.fake_prepare))
        self.useFixture(fixtures.MockPatchObject(
            novatox, 'run', side_effect=self.fake_run))
        self.useFixture(fixtures.MockPatch('sys.stdout',
                                           new_callable=io.StringIO))

    def fake_prepare(self, base, pristine=False, release=False):
        tree = self.trees['pristine' if pristine or release else 'fork']
        return novatox.Prepared(tree, [], 'tox', ['whitelist_externals'],
                                (2, 7), ROCKY)

    def fake_run(self, base, args, prepared=None, capture=False):
        name = prepared.tree.name
        self.calls.append((name, args))
        env = args[1]
        statuses = dict(self.RESULTS[name][env])
        if '--load-list' in args:
            ids = pathlib.Path(args[args.index('--load-list') + 1])
            wanted = ids.read_text().split()
            self.loaded.append(wanted)
            statuses = {i: s for i, s in statuses.items() if i in wanted}
        add_run(prepared.tree, statuses)
        failed = any(s == 'fail' for s in statuses.values())
        return int(failed), 'output\n'

    def test_failures_run_again_on_pristine(self):
        done = gate.gate(self.base, ['unit', 'functional'])
        unit, functional = [record for record, _ in done]
        self.assertEqual({'run': 4, 'passed': 1, 'failed': 2, 'skipped': 1},
                         unit['tests'])
        self.assertEqual(['u.T.test_upstream'], unit['shared'])
        self.assertEqual(['u.T.test_ours'], unit['ours'])
        self.assertEqual(('py27', 'tox 3.28.0'), (unit['env'], unit['tox']))
        self.assertTrue(gate.failed(unit))
        self.assertEqual('FAILED (1 ours)', gate.result(unit))
        self.assertEqual('ok', gate.result(functional))
        # the pristine tree ran only the fork's failures, by id
        pristine = [args for name, args in self.calls if name == 'pristine']
        self.assertEqual(1, len(pristine))
        self.assertEqual(['-e', 'py27', '--', '--load-list'],
                         pristine[0][:4])
        self.assertEqual(['fork', 'pristine', 'fork'],
                         [name for name, _ in self.calls])

    def test_a_second_run_is_cached(self):
        gate.gate(self.base, ['unit', 'functional'])
        del self.calls[:]
        done = gate.gate(self.base, ['unit', 'functional'])
        self.assertEqual([], self.calls)
        self.assertEqual([True, True], [cached for _, cached in done])
        self.assertEqual(['u.T.test_ours'], done[0][0]['ours'])
        cached = sorted(os.listdir(gate.cache_dir(self.project.root)))
        # fork unit, fork functional, pristine unit of the failures
        self.assertEqual(3, len(cached))
        # a selection is another run
        gate.gate(self.base, ['unit'], {'unit': 'test_ok'})
        self.assertEqual([('fork', ['-e', 'py27', '--', 'test_ok'])],
                         self.calls)

    def test_a_changed_tree_runs_again(self):
        gate.gate(self.base, ['functional'])
        fork = self.trees['fork']
        (fork / 'name').write_text('changed\n')
        fakes.git(fork, 'commit', '-qam', 'changed')
        del self.calls[:]
        gate.gate(self.base, ['functional'])
        self.assertEqual(1, len(self.calls))

    def test_all_shared_passes(self):
        self.RESULTS = {
            'fork': {'py27': {'u.T.test_upstream': 'fail'}},
            'pristine': {'py27': {'u.T.test_upstream': 'fail'}}}
        (record, _), = gate.gate(self.base, ['unit'])
        self.assertEqual((['u.T.test_upstream'], []),
                         (record['shared'], record['ours']))
        self.assertFalse(gate.failed(record))
        self.assertEqual('ok (1 shared)', gate.result(record))

    def test_a_test_the_fork_adds_is_ours(self):
        # It fails on the release's tree too (the fork's tests fail
        # there): not run there, and ours all the same.
        self.RESULTS = {
            'fork': {'py27': {'u.T.test_upstream': 'fail',
                              'u.T.test_added': 'fail'}},
            'pristine': {'py27': {'u.T.test_upstream': 'fail',
                                  'u.T.test_added': 'fail'}}}
        (record, _), = gate.gate(self.base, ['unit'])
        self.assertEqual((['u.T.test_upstream'], ['u.T.test_added']),
                         (record['shared'], record['ours']))
        self.assertEqual('FAILED (1 ours)', gate.result(record))
        self.assertEqual([['u.T.test_upstream']], self.loaded)

    def test_only_added_tests_failed(self):
        self.RESULTS = {'fork': {'py27': {'u.T.test_added': 'fail'}}}
        (record, _), = gate.gate(self.base, ['unit'])
        self.assertEqual(([], ['u.T.test_added']),
                         (record['shared'], record['ours']))
        self.assertEqual(['fork'], [name for name, _ in self.calls])

    def test_a_pristine_run_is_not_told(self):
        gate.gate(self.base, ['functional'], pristine=True)
        self.assertEqual(['pristine'], [name for name, _ in self.calls])
        record = json.loads(next(gate.cache_dir(
            self.project.root).iterdir()).read_text())
        self.assertTrue(record['pristine'])
        self.assertNotIn('shared', record)

    def test_rows(self):
        done = gate.gate(self.base, ['unit', 'functional'])
        rows = [gate.row(record, cached) for record, cached in done]
        self.assertEqual(['unit', 'py27', 'FAILED (1 ours)', '4', '1', '2',
                          '1', '1', '1'], rows[0][:9])
        header, rule = gate.render(rows).splitlines()[:2]
        self.assertEqual(gate.HEADER, re.split(r'  +', header))
        self.assertTrue(set(rule) <= {'-', ' '})
