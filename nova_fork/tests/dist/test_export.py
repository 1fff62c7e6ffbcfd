import shutil
from unittest import mock

import testtools

from nova_fork import config
from nova_fork.dist import export
from nova_fork.dist import quilt
from nova_fork import errors
from nova_fork.tests import fakes


class ExportTest(testtools.TestCase):

    def test_export_applies_with_git_am(self):
        project = self.useFixture(fakes.FakeProject())
        base = config.get_base(project.root, 'fake')
        dest = export.export(base)
        names = sorted(p.name for p in dest.iterdir())
        self.assertEqual(['0001-Fix-claims.patch', '0002-Fix-manager.patch',
                          '0003-Add-regression-tests.patch'], names)
        text = (dest / '0002-Fix-manager.patch').read_text()
        self.assertIn('releasenotes/notes/fake.yaml', text)
        self.assertTrue(text.startswith('From 0000000000000000000000000000'))

    def test_export_refuses_a_series_that_does_not_reproduce(self):
        project = self.useFixture(fakes.FakeProject())
        base = config.get_base(project.root, 'fake')
        real = export.format_patch

        def first_only(tree, since, outdir):
            return real(tree, since, outdir)[:1]

        with mock.patch.object(export, 'format_patch',
                               side_effect=first_only):
            exc = self.assertRaises(errors.PatchError, export.export, base)
        self.assertIn('does not reproduce the fork', str(exc))
        self.assertFalse((project.root / 'dist' / 'fake').exists())


class QuiltTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        if not shutil.which('quilt'):
            self.skipTest('quilt is not installed')
        self.project = self.useFixture(fakes.FakeProject())
        sha256 = self.project.add_release('1.0.9', ChangeLog='1.0.9\n')
        self.project.append('quilt = true\nreleases = 1.0.9 %s\n' % sha256)
        self.base = config.get_base(self.project.root, 'fake')

    def test_quilt_series_with_dep3_headers(self):
        dest = export.export(self.base)
        quilt_dir = dest / 'quilt'
        names = (quilt_dir / 'series').read_text().split()
        self.assertEqual(['0001-Fix-claims.patch', '0002-Fix-manager.patch',
                          '0003-Add-regression-tests.patch'], names)
        text = (quilt_dir / names[1]).read_text()
        self.assertTrue(text.startswith('Description: Fix manager\n'))
        for field in ('Author: t <t@example.org>', 'Origin: vendor, nova-fork',
                      'Bug: https://bugs.launchpad.net/nova/+bug/1860555',
                      'Last-Update: 2020-01-01'):
            self.assertIn('\n' + field, text)
        self.assertIn('releasenotes/notes/fake.yaml', text)

    def test_quilt_series_that_does_not_push(self):
        real = quilt.write_series

        def broken(tree, since, outdir, bug):
            names = real(tree, since, outdir, bug)
            patch = outdir / names[0]
            patch.write_text(patch.read_text().replace(
                '     def abort(self):', '     def abandon(self):'))
            return names

        with mock.patch.object(quilt, 'write_series', side_effect=broken):
            exc = self.assertRaises(errors.PatchError, export.export,
                                    self.base)
        self.assertIn('quilt push -a fails on nova 1.0.0', str(exc))
        self.assertFalse((self.project.root / 'dist' / 'fake').exists())
