import contextlib
import io

import testtools

from nova_fork import cmd
from nova_fork import config
from nova_fork import errors
from nova_fork.tests import fakes


class ConfigTest(testtools.TestCase):

    def test_parse_series(self):
        self.assertEqual(
            [('0001-a.patch', (), 'u1', (), ''),
             ('0002-b.msg', ('x.py', 'y.py'), None, (), 'move'),
             ('0003-c.patch', (), 'u2', ('u1',), 'lm')],
            config.parse_series('# c\n0001-a.patch unit=u1\n\n'
                                '0002-b.msg review x.py y.py\n'
                                '0003-c.patch needs=u1 unit=u2 review=lm'))

    def series_says(self, old, new):
        project = self.useFixture(fakes.FakeProject())
        base = config.get_base(project.root, 'fake')
        series = project.root / base.patches / 'series'
        series.write_text(series.read_text().replace(old, new))
        return self.assertRaises(errors.UsageError, base.commits)

    def test_needs_an_unknown_unit(self):
        exc = self.series_says('unit=claim-abort',
                               'unit=claim-abort needs=nosuch')
        self.assertIn("entry 1 (0001-Fix-claims.patch) names unit 'nosuch', "
                      'which bases.ini does not define', str(exc))

    def test_a_fix_is_one_unit(self):
        exc = self.series_says(' unit=claim-abort', '')
        self.assertIn('entry 1 (0001-Fix-claims.patch) says no unit, and '
                      'changes nova/compute/claims.py: a patch of nova\'s '
                      'code is a unit of the fix; add unit=NAME, one of '
                      'claim-abort, free-instance', str(exc))
        exc = self.series_says('unit=claim-abort',
                               'unit=claim-abort unit=free-instance')
        self.assertIn("names unit 'claim-abort,free-instance'", str(exc))

    def test_a_patch_of_tests_needs_no_unit(self):
        project = self.useFixture(fakes.FakeProject())
        work = project.root / 'work'
        patches = project.root / 'patches' / 'fake'
        (patches / '0004-Add-a-test.patch').write_text(fakes.make_patch(
            work, 'nova/tests/unit/test_x.py', '', '# test\n', 'A test'))
        series = patches / 'series'
        series.write_text(series.read_text() + '0004-Add-a-test.patch\n')
        base = config.get_base(project.root, 'fake')
        self.assertEqual([None, None], [c.unit for c in base.commits()[2:]])

    def test_a_patch_of_requirements_needs_no_unit(self):
        project = self.useFixture(fakes.FakeProject())
        patches = project.root / 'patches' / 'fake'
        (patches / '0004-Require.patch').write_text(fakes.make_patch(
            project.root / 'work', 'requirements.txt', 'a>=1\n', 'a>=2\n',
            'Require a 2'))
        series = patches / 'series'
        series.write_text(series.read_text() + '0004-Require.patch\n')
        base = config.get_base(project.root, 'fake')
        self.assertEqual([None, None], [c.unit for c in base.commits()[2:]])
        # but not other files at the top of the tree
        (patches / '0005-Setup.patch').write_text(fakes.make_patch(
            project.root / 'work2', 'setup.cfg', 'a\n', 'b\n', 'Setup'))
        series.write_text(series.read_text() + '0005-Setup.patch\n')
        exc = self.assertRaises(errors.UsageError, base.commits)
        self.assertIn('says no unit, and changes setup.cfg', str(exc))

    def test_units_and_bug_come_from_bases_ini(self):
        project = self.useFixture(fakes.FakeProject())
        self.assertEqual(['claim-abort', 'free-instance'],
                         list(config.load_units(project.root)))
        bug = config.load_bug(project.root)
        self.assertEqual(('1860555', 'devices'),
                         (bug.id, bug.failures[1][0]))
        self.assertEqual(['fake'], list(config.load_bases(project.root)))

    def test_a_line_like_another(self):
        project = self.useFixture(fakes.FakeProject())
        project.append('releases = 1.0.1 %s\n' % ('cd' * 32))
        project.append('\n[older]\nlike = fake\nnova = 0.1.0\n'
                       'sha256 = %s\nquilt = yes\n' % ('ab' * 32))
        bases = config.load_bases(project.root)
        self.assertEqual(
            ('0.1.0', True, bases['fake'].regression, bases['fake'].lock),
            (bases['older'].nova, bases['older'].quilt,
             bases['older'].regression, bases['older'].lock))
        # the releases of a line are its own series'
        self.assertEqual((('1.0.1', 'cd' * 32),), bases['fake'].releases)
        self.assertEqual((), bases['older'].releases)
        project.append('\n[odd]\nlike = odd\n')
        exc = self.assertRaises(errors.UsageError, config.load_bases,
                                project.root)
        self.assertEqual("bases.ini: series odd is like 'odd', which is not "
                         "another line", str(exc))

    def test_unknown_series(self):
        project = self.useFixture(fakes.FakeProject())
        exc = self.assertRaises(errors.UnknownSeries, config.get_base,
                                project.root, 'queens')
        self.assertEqual("unknown series 'queens'; known series: fake "
                         "(see bases.ini)", str(exc))

    def test_variants_shared_by_a_generation(self):
        project = self.useFixture(fakes.FakeProject())
        shared = project.root / 'patches/variants/old/nova/tests'
        shared.mkdir(parents=True)
        (shared / 'test_fake.py').write_text('# the old test API\n')
        project.append('\n[older]\nlike = fake\nnova = 0.1.0\n'
                       'sha256 = %s\nvariants = patches/variants/old\n'
                       '\n[oldest]\nlike = older\nnova = 0.0.1\n'
                       'sha256 = %s\n' % ('ab' * 32, 'cd' * 32))
        bases = config.load_bases(project.root)
        sources = [[c.sources for c in bases[name].commits()][2]
                   for name in ('fake', 'older', 'oldest')]
        self.assertEqual(
            [(project.root / 'nova/tests/test_fake.py',),
             (shared / 'test_fake.py',), (shared / 'test_fake.py',)],
            sources)

    def test_ci_steps(self):
        project = self.useFixture(fakes.FakeProject())
        project.append('\n[older]\nlike = fake\nnova = 0.1.0\n'
                       'sha256 = %s\nci = export\n' % ('ab' * 32))
        bases = config.load_bases(project.root)
        self.assertEqual(('reproduce', 'export'), bases['fake'].ci)
        self.assertEqual(('export',), bases['older'].ci)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(0, cmd.main(['lines', '--ci', 'reproduce']))
        self.assertEqual('fake\n', out.getvalue())
        project.append('\n[bad]\nlike = fake\nci = prove\n')
        exc = self.assertRaises(errors.UsageError, config.load_bases,
                                project.root)
        self.assertEqual('bases.ini: series bad has ci = prove; the steps '
                         'are reproduce, export, root', str(exc))

    def test_series_naming_a_missing_file(self):
        project = self.useFixture(fakes.FakeProject())
        base = config.get_base(project.root, 'fake')
        (project.root / 'nova/tests/test_fake.py').unlink()
        exc = self.assertRaises(errors.UsageError, base.commits)
        self.assertIn('entry 3 (0003-Add-tests.msg) names', str(exc))
