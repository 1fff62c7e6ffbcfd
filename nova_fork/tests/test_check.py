import io
import json
from unittest import mock

import testtools

from nova_fork import cmd
from nova_fork import config
from nova_fork import errors
from nova_fork.tests import fakes
from nova_fork.tree import fetch
from nova_fork import units


class CheckTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        self.root = self.project.root

    def run_check(self, *args):
        with mock.patch('sys.stdout', new_callable=io.StringIO) as out, \
                mock.patch('sys.stderr', new_callable=io.StringIO) as err:
            code = cmd.main(['-q', 'check'] + list(args))
        return code, out.getvalue(), err.getvalue()

    def test_release_that_needs_every_unit(self):
        code, out, _ = self.run_check('1.0.0')
        self.assertEqual(1, code)
        self.assertEqual(
            'nova 1.0.0 (one)\n'
            '  needs  claim-abort    Claim.abort aborts on the instance\n'
            '  needs  free-instance  the tracker frees with the instance\n'
            'nova 1.0.0 needs claim-abort, free-instance of the fix for bug '
            '1860555: nova-fork build fake\n', out)

    def test_release_with_every_unit(self):
        self.project.add_release('1.0.1', fakes.FIXED_CLAIMS,
                                 fakes.FIXED_MANAGER)
        code, out, _ = self.run_check('1.0.1', '--json')
        self.assertEqual(0, code)
        self.assertEqual({'version': '1.0.1', 'line': 'fake',
                          'has': ['claim-abort', 'free-instance'],
                          'needs': []}, json.loads(out))

    def test_code_that_moved_gets_the_same_answer(self):
        # the fixes upstream wrote their own way, around other code
        claims = '# moved down\n\n\n' + fakes.FIXED_CLAIMS.replace(
            'self.context, self._ref,\n', 'ctx, self._ref,\n').replace(
            'self.nodename)', 'node)  # reformatted')
        self.project.add_release('1.0.2', claims, fakes.MANAGER.replace(
            'for dev in self.pci_devs:', 'for dev in list(self.pci_devs):'))
        code, out, _ = self.run_check('1.0.2', '--json')
        self.assertEqual(1, code)
        self.assertEqual({'version': '1.0.2', 'line': 'fake',
                          'has': ['claim-abort'],
                          'needs': ['free-instance']}, json.loads(out))

    def test_release_not_in_bases_ini_names_the_command(self):
        self.project.add_release('1.0.3')
        code, out, _ = self.run_check('1.0.3')
        self.assertEqual(1, code)
        self.assertIn('needs claim-abort, free-instance of the fix for bug '
                      '1860555: nova-fork build fake --release 1.0.3\n', out)

    def test_release_no_line_serves(self):
        self.project.add_release('2.0.0', manager=fakes.FIXED_MANAGER)
        code, out, _ = self.run_check('2.0.0', '--json')
        self.assertEqual((1, None), (code, json.loads(out)['line']))
        code, out, _ = self.run_check('2.0.0')
        self.assertIn('needs claim-abort of the fix for bug 1860555; no line '
                      'serves two yet', out)

    def test_the_line_of_the_release_is_picked(self):
        self.project.append(fakes.line_section(
            'two', '2.0.0', 'ab' * 32, 'patches/fake'))
        self.project.add_release('2.0.5')
        self.project.add_release('1.0.5')
        self.assertEqual('two', json.loads(
            self.run_check('2.0.5', '--json')[1])['line'])
        self.assertEqual('fake', json.loads(
            self.run_check('1.0.5', '--json')[1])['line'])

    def test_errors_are_one_line_and_exit_2_or_more(self):
        self.project.add_release('1.9.0', claims='# no claims here\n')
        no_pypi = mock.patch.object(
            fetch, '_download', side_effect=errors.FetchError(
                'cannot read https://pypi.org/simple/nova/: the index is not '
                'reachable'))
        for args, code, text in [
                (['abc'], 2, "'abc' is not a nova version"),
                (['0.9.0'], 2, 'nova 0.9.0 is older than one (1.0.0), the '
                               'first release this project covers'),
                (['1.9.0'], 5, 'cannot tell which units of the fix nova '
                               '1.9.0 has: nova/compute/claims.py has none '
                               'of Claim.abort'),
                (['9.9.9'], 3, 'the index is not reachable')]:
            with no_pypi:
                got, out, err = self.run_check(*args)
            self.assertEqual(code, got, args)
            self.assertEqual('', out)
            self.assertEqual(1, len(err.splitlines()), err)
            self.assertIn(text, err)


class UnitsTest(testtools.TestCase):

    def unit(self, lacks, functions=('C.f',)):
        return config.Unit('u', 's', 'x.py', functions, lacks)

    def test_verdicts(self):
        unit = self.unit('self.g(_, self.instance, ...)')
        code = 'class C:\n    def f(self):\n        self.g(a, %s)\n'
        self.assertEqual(units.NEEDS, units.verdict(
            unit, code % 'self.instance, b')[0])
        self.assertEqual(units.HAS, units.verdict(
            unit, code % 'self.instance_ref, b')[0])

    def test_keyword_verdicts(self):
        unit = self.unit('objects.M(..., old=instance.devs)')
        code = ('class C:\n    def f(self, instance):\n'
                '        return objects.M(ctxt, new=n, %s)\n')
        self.assertEqual(units.NEEDS, units.verdict(
            unit, code % 'old=instance.devs')[0])
        self.assertEqual(units.HAS, units.verdict(
            unit, code % 'old=instance.devs.obj_clone()')[0])
        self.assertEqual(units.HAS, units.verdict(
            unit, code % 'old=copy.deepcopy(instance.devs)')[0])

    def test_only_the_functions_named_are_read(self):
        unit = self.unit('self.g(_)', functions=('C.f', 'C.gone'))
        code = ('class C:\n    def f(self):\n        self.g(a, b)\n'
                '    def h(self):\n        self.g(a)\n')
        self.assertEqual((units.HAS, 'in C.f'), units.verdict(unit, code))

    def test_no_call_to_read_is_no_answer(self):
        unit = self.unit('self.g(_)')
        exc = self.assertRaises(
            units.UnknownCode, units.verdict, unit,
            'class C:\n    def f(self):\n        self.other(a)\n')
        self.assertEqual('C.f makes no call to self.g', str(exc))

    def test_bad_pattern(self):
        self.assertRaises(errors.UsageError, units.parse_pattern, 'a = b')
