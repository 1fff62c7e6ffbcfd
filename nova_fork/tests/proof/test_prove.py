from unittest import mock

import testtools

from nova_fork import config
from nova_fork.proof import prove


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
