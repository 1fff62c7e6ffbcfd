import hashlib
import json
import re
import threading
from unittest import mock

import fixtures
import testtools

from nova_fork import config
from nova_fork import errors
from nova_fork.proof import prove
from nova_fork.tests import fakes


class ProveTest(testtools.TestCase):

    def record(self, status, reason=''):
        return {'status': status, 'reason': reason, 'duration': 1.0}

    def test_classify(self):
        bug = config.Bug('1', 'u', (('in use', 'already in use'),
                                    ('devices', 'PCI device')))

        def classify(*args):
            return prove.classify(self.record(*args), bug)

        self.assertEqual('pass', classify('success'))
        self.assertEqual('FAIL (in use)', classify(
            'fail', 'AssertionError: ... Device 0000:81:00.0 is already in '
                    'use'))
        self.assertEqual('FAIL (devices)', classify(
            'fail', 'testtools.matchers._impl.MismatchError: PCI device '
                    '0000:81:00.0 held by two instances'))
        self.assertEqual('ERROR (ImportError: no module x)', classify(
            'fail', 'Traceback\nImportError: no module x\n'))
        self.assertEqual('ERROR (TimeoutException)', classify(
            'fail', 'Traceback\nTimeoutException'))
        # the failure texts are the bug's, from its configuration
        other = config.Bug('2', 'u', (('leak', 'leaked'),))
        self.assertEqual('FAIL (leak)', prove.classify(self.record(
            'fail', 'AssertionError: 2 devices leaked'), other))
        self.assertTrue(classify(
            'fail', 'AssertionError: 2 devices leaked').startswith('ERROR'))

    def rows(self, pristine, fork='pass', without=('FAIL (devices)',)):
        cells = {'pristine': ('m.T.test_a', pristine, 1.0),
                 'fork': ('m.T.test_a', fork, 1.0)}
        for n, outcome in enumerate(without, start=1):
            cells['without %d' % n] = ('m.T.test_a', outcome, 1.0)
        return {'T.test_a': cells}

    def base(self, affects='test_a'):
        """A line whose units a and b each affect the tests affects."""
        base = mock.Mock(regression=('m',), nova='1.0')
        units = {name: config.Unit(name, 's', 'f', (), 'x()', affects)
                 for name in ('a', 'b')}
        patcher = mock.patch.object(config, 'load_units',
                                    return_value=units)
        patcher.start()
        self.addCleanup(patcher.stop)
        return base

    def test_reproduce(self):
        self.assertEqual([], prove.reproduce_problems(
            self.base(), self.rows('FAIL (in use)'), {'a'}))
        problems = prove.reproduce_problems(
            self.base(), self.rows('ERROR (ImportError: x)'), {'a'})
        self.assertEqual(1, len(problems))
        self.assertIn("it gave ERROR (ImportError: x)", problems[0])
        self.assertEqual(2, len(prove.reproduce_problems(
            self.base(), self.rows('pass', fork='FAIL (devices)'), {'a'})))

    def test_reproduce_on_a_release_with_the_units(self):
        # a release that lacks no unit a test is about passes that test
        self.assertEqual([], prove.reproduce_problems(
            self.base(affects='test_zzz'), self.rows('pass'), {'a'})[1:])
        problems = prove.reproduce_problems(
            self.base(affects='test_zzz'), self.rows('FAIL (in use)'), {'a'})
        self.assertIn('on the pristine base it should pass', problems[0])

    def test_reproduce_needs_an_affected_test(self):
        problems = prove.reproduce_problems(
            self.base(affects='test_zzz'), self.rows('pass'), {'a', 'b'})
        self.assertEqual(['no regression test is affected by the units nova '
                          '1.0 lacks (a, b)'], problems)

    def test_affected_pattern(self):
        base = self.base()
        self.assertEqual('(?:test_a)|(?:test_a)',
                         prove.affected_pattern(base, {'b', 'a'}))
        self.assertEqual('', prove.affected_pattern(base, set()))

    def test_mutants(self):
        columns = ['pristine', 'fork', 'without 1', 'without 2']
        rows = self.rows('FAIL (devices)',
                         without=('FAIL (devices)', 'pass'))
        problems = prove.mutant_problems(self.base(), columns, rows)
        self.assertEqual(['the fork without 2 passes every regression '
                          'test: that fix is not covered'], problems)

    def test_render(self):
        text = prove.render(['pristine', 'fork'],
                            self.rows('FAIL (in use)'))
        self.assertIn('T.test_a  FAIL (in use)  pass', text)


class SelectionTest(testtools.TestCase):
    """A tree without a unit runs the tests the units it leaves out affect."""

    AFFECTS = {
        'claim-abort': r'test_bug_1860555\.\w+\.test_(same|two)$',
        'free-instance': r'test_bug_1860555\.\w+\.test_same$',
        'move-claim-abort': r'test_move\.\w+\.test_(resize|evacuate)$',
        'free-device': r'test_move\.\w+\.test_resize$',
    }
    IDS = ['n.regressions.test_bug_1860555.T.test_same',
           'n.regressions.test_bug_1860555.T.test_two',
           'n.regressions.test_bug_1860555.T.test_guard',
           'n.libvirt.test_move.M.test_resize',
           'n.libvirt.test_move.M.test_evacuate',
           'n.libvirt.test_move.M.test_guard',
           # the same names in a module that is not a regression module
           'n.other.test_bug_1860555.T.test_same']

    def setUp(self):
        super().setUp()
        self.units(self.AFFECTS)
        self.base = mock.Mock(
            regression=('n.regressions.test_bug_1860555',
                        'n.libvirt.test_move'))

    def units(self, affects):
        units = {name: config.Unit(name, 's', 'f', (), 'x()', regex)
                 for name, regex in affects.items()}
        self.useFixture(fixtures.MockPatchObject(
            config, 'load_units', return_value=units))

    def commits(self, *specs):
        return [config.Commit(n, 'c%d.patch' % n, None, (), unit=unit,
                              needs=needs)
                for n, (unit, needs) in enumerate(specs, start=1)]

    def selected(self, regex):
        return [i for i in self.IDS if re.search(regex, i)]

    def test_selection_of_one_unit(self):
        self.assertEqual(
            ['n.libvirt.test_move.M.test_resize'],
            self.selected(prove.selection(self.base, {'free-device'})))

    def test_selection_of_a_unit_and_those_that_need_it(self):
        self.assertEqual(
            ['n.regressions.test_bug_1860555.T.test_same',
             'n.regressions.test_bug_1860555.T.test_two',
             'n.libvirt.test_move.M.test_resize',
             'n.libvirt.test_move.M.test_evacuate'],
            self.selected(prove.selection(
                self.base, {'claim-abort', 'move-claim-abort'})))

    def test_a_unit_that_names_no_tests_runs_them_all(self):
        self.units(dict(self.AFFECTS, **{'free-device': ''}))
        self.assertIsNone(prove.selection(self.base, {'free-device'}))
        self.assertIsNone(prove.selection(
            self.base, {'free-device', 'move-claim-abort'}))

    def test_the_columns_of_a_line(self):
        # rocky's shape: move-claim-abort needs claim-abort, free-device
        # needs free-instance
        self.base.commits.return_value = self.commits(
            ('claim-abort', ()), ('free-instance', ()), (None, ()),
            ('move-claim-abort', ('claim-abort',)),
            ('free-device', ('free-instance',)))
        columns = prove.variants(self.base, set(self.AFFECTS))
        self.assertEqual(
            [('pristine', {'pristine': True}, None), ('fork', {}, None)],
            columns[:2])
        self.assertEqual(
            [('without claim-abort (and move-claim-abort)',
              {'without': 'claim-abort'},
              prove.selection(self.base, {'claim-abort',
                                          'move-claim-abort'})),
             ('without free-instance (and free-device)',
              {'without': 'free-instance'},
              prove.selection(self.base, {'free-instance', 'free-device'})),
             ('without move-claim-abort', {'without': 'move-claim-abort'},
              prove.selection(self.base, {'move-claim-abort'})),
             ('without free-device', {'without': 'free-device'},
              prove.selection(self.base, {'free-device'}))],
            columns[2:])
        # without mutants: every test on the pristine release and the fork
        self.assertEqual(columns[:2], prove.variants(
            self.base, set(self.AFFECTS), mutants=False))

    def test_mutants_count_only_what_ran(self):
        rows = {'T.test_a': {'fork': ('m.T.test_a', 'pass', 1.0),
                             'without x': ('m.T.test_a', 'pass', 1.0)},
                'T.test_b': {'fork': ('m.T.test_b', 'pass', 1.0)}}
        # test_b did not run without x: that is no failure
        self.assertEqual(['the fork without x passes every regression test: '
                          'that fix is not covered'],
                         prove.mutant_problems(self.base,
                                               ['fork', 'without x'], rows))
        self.assertIn('T.test_b  pass  not run',
                      prove.render(['fork', 'without x'], rows))


class ResultsCacheTest(testtools.TestCase):
    """Results are cached by tree commit, lock and selection."""

    fail = ()

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        lock = self.project.root / 'locks' / 'fake.txt'
        lock.parent.mkdir()
        lock.write_text('pbr==6.1.1\n')
        self.base = config.get_base(self.project.root, 'fake')
        self.runs = []
        self.threads = set()
        self.useFixture(fixtures.MockPatchObject(
            prove, 'run_module', side_effect=self.run_module))
        self.useFixture(fixtures.MockPatchObject(prove.venv, 'ensure'))
        self.rooted = set()
        self.useFixture(fixtures.MockPatchObject(
            prove.runtime, 'pick', side_effect=lambda base: mock.Mock(
                in_root=base.label in self.rooted)))

    def run_module(self, base, tree, regex=None):
        self.runs.append((tree.name, regex))
        if tree.name in self.fail:
            raise errors.ForkError('reading the results failed')
        self.threads.add(threading.current_thread())
        ids = ['nova.tests.test_fake.T.test_a',
               'nova.tests.test_fake.T.test_b']
        return {i: {'id': i, 'status': 'success', 'reason': '',
                    'duration': 1.0}
                for i in ids if regex is None or re.search(regex, i)}

    def test_cache_key(self):
        every = ['nova.tests.test_fake']
        key = prove.cache_key('c0ffee', 'pbr==6.1.1\n', every)
        self.assertEqual(hashlib.sha256(
            b'c0ffee\0pbr==6.1.1\n\0nova.tests.test_fake').hexdigest()[:20],
            key)
        keys = {key,
                prove.cache_key('c0ffee', 'pbr==6.1.1\n', ['test_a']),
                prove.cache_key('c0ffee', 'pbr==6.1.1\n', ['test_b']),
                prove.cache_key('c0ffef', 'pbr==6.1.1\n', ['test_a']),
                prove.cache_key('c0ffee', 'pbr==6.1.2\n', ['test_a']),
                prove.cache_key('c0ffee', 'pbr==6.1.1\n', every + ['m2'])}
        self.assertEqual(6, len(keys))
        # the filters stestr gets: the selection, or every module
        self.assertEqual(['test_a'], prove.filters(self.base, 'test_a'))
        self.assertEqual(every, prove.filters(self.base))

    def test_a_selection_is_cached_apart(self):
        records, cached = prove.results(self.base, 'test_a', without=None)
        self.assertEqual((['nova.tests.test_fake.T.test_a'], False),
                         (list(records), cached))
        records, cached = prove.results(self.base, 'test_a')
        self.assertTrue(cached)
        # a run of every test is not the run of one
        records, cached = prove.results(self.base)
        self.assertEqual((2, False), (len(records), cached))
        self.assertEqual([('fake', 'test_a'), ('fake', None)], self.runs)

    def test_a_selection_is_taken_from_a_run_of_every_test(self):
        prove.results(self.base, pristine=True)
        records, cached = prove.results(self.base, 'test_b$',
                                        pristine=True)
        self.assertEqual((['nova.tests.test_fake.T.test_b'], True),
                         (list(records), cached))
        self.assertEqual([('fake-pristine', None)], self.runs)

    def test_another_lock_runs_again(self):
        prove.results(self.base)
        self.base.lock.write_text('pbr==6.1.2\n')
        records, cached = prove.results(self.base)
        self.assertFalse(cached)
        self.assertEqual(2, len(self.runs))

    def test_runs_side_by_side(self):
        runs = prove.plan(self.base)
        self.assertEqual(['pristine', 'fork', 'without claim-abort',
                          'without free-instance'],
                         [r.column for r in runs])
        self.assertFalse(any(r.cached for r in runs))
        prove.execute(runs, jobs=2)
        self.assertEqual(4, len(self.runs))
        # the runs of every test first
        self.assertEqual([None, None], [regex for _, regex in
                                        self.runs[:2]])
        self.assertNotIn(threading.main_thread(), self.threads)
        for run in runs:
            self.assertTrue(run.cache.is_file())
            self.assertEqual(run.records, json.loads(run.cache.read_text()))
        # a second plan reads them all from the cache
        again = prove.plan(self.base)
        self.assertTrue(all(r.cached for r in again))
        self.assertEqual([r.records for r in runs],
                         [r.records for r in again])

    def test_a_run_in_a_debian_root_runs_in_the_main_thread(self):
        self.rooted = {'fake'}
        prove.execute(prove.plan(self.base, mutants=False), jobs=2)
        self.assertEqual({threading.main_thread()}, self.threads)

    def test_an_error_stops_the_command(self):
        self.fail = ('fake-pristine',)
        runs = prove.plan(self.base)
        self.assertRaises(errors.ForkError, prove.execute, runs, 2)
        self.assertFalse(runs[0].cache.exists())

    def test_settings(self):
        self.assertEqual((3, 2), prove.settings({
            'NOVA_FORK_JOBS': '3', 'NOVA_FORK_CONCURRENCY': '2'}))
        for bad in ({'NOVA_FORK_JOBS': '0'}, {'NOVA_FORK_JOBS': 'x'},
                    {'NOVA_FORK_CONCURRENCY': '-1'}):
            self.assertRaises(errors.UsageError, prove.settings, bad)
