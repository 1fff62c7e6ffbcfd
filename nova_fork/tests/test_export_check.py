import shutil
from unittest import mock

import testtools

from nova_fork import build
from nova_fork import check
from nova_fork import config
from nova_fork import errors
from nova_fork import export
from nova_fork import gitutils
from nova_fork import quilt
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


class CheckTest(testtools.TestCase):

    def base_with_release(self, version, claims, manager):
        """The fake series, and a fake sdist of nova VERSION in the cache."""
        project = self.useFixture(fakes.FakeProject())
        fakes.make_sdist(
            project.root / ('.cache/sdists/nova-%s.tar.gz' % version),
            version, {'nova/compute/claims.py': claims,
                      'nova/pci/manager.py': manager})
        return config.get_base(project.root, 'fake')

    def test_release_that_needs_the_fix(self):
        project = self.useFixture(fakes.FakeProject())
        base = config.get_base(project.root, 'fake')
        needs, lines = check.check(base, '1.0.0')
        self.assertTrue(needs)
        self.assertIn('nova 1.0.0 needs the fix', lines[0])

    def test_release_that_has_the_fix(self):
        base = self.base_with_release('1.0.1', fakes.FIXED_CLAIMS,
                                      fakes.FIXED_MANAGER)
        needs, lines = check.check(base, '1.0.1')
        self.assertFalse(needs)
        self.assertIn('nova 1.0.1 already has the fix', lines[0])

    def test_release_with_part_of_the_fix(self):
        # upstream fixed the PCI tracker the same way, the claim otherwise
        base = self.base_with_release(
            '1.0.2', fakes.CLAIMS.replace('self.instance)', 'self.original)'),
            fakes.FIXED_MANAGER)
        needs, lines = check.check(base, '1.0.2')
        self.assertFalse(needs)
        self.assertIn('0001-Fix-claims.patch: does not apply', lines[1])
        self.assertIn('0002-Fix-manager.patch: already carries '
                      'nova/pci/manager.py hunk 1', lines[2])

    def test_release_that_lacks_one_fix(self):
        base = self.base_with_release('1.0.3', fakes.CLAIMS,
                                      fakes.FIXED_MANAGER)
        needs, lines = check.check(base, '1.0.3')
        self.assertFalse(needs)
        self.assertEqual('nova 1.0.3 already has part of the fix for bug '
                         '1860555 but lacks 0001-Fix-claims.patch of the '
                         'fake series', lines[0])

    def test_release_the_patches_do_not_fit(self):
        base = self.base_with_release('0.1.0', '# other\n', '# other\n')
        exc = self.assertRaises(errors.PatchError, check.check, base,
                                '0.1.0')
        self.assertIn('cannot tell whether nova 0.1.0 has the fix: '
                      '0001-Fix-claims.patch: does not apply: '
                      'nova/compute/claims.py hunk 1 (@@ -1,6 +1,7 @@',
                      str(exc))

    def test_pick_base(self):
        project = self.useFixture(fakes.FakeProject())
        bases = config.load_bases(project.root)
        self.assertEqual('fake', check.pick_base(bases, '1.2.3').series)
        self.assertEqual('fake', check.pick_base(bases, '7.0.0').series)


class QuiltTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        if not shutil.which('quilt'):
            self.skipTest('quilt is not installed')
        self.project = self.useFixture(fakes.FakeProject())
        sha256 = fakes.make_sdist(
            self.project.root / '.cache/sdists/nova-0.9.0.tar.gz', '0.9.0', {
                'ChangeLog': '0.9.0\n',
                'nova/compute/claims.py': fakes.CLAIMS,
                'nova/pci/manager.py': fakes.MANAGER})
        bases = self.project.root / 'bases.ini'
        bases.write_text(bases.read_text() + 'quilt = true\n'
                         'releases = 0.9.0 %s\n' % sha256)
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

        def broken(tree, since, outdir):
            names = real(tree, since, outdir)
            patch = outdir / names[0]
            patch.write_text(patch.read_text().replace(
                '     def abort(self):', '     def abandon(self):'))
            return names

        with mock.patch.object(quilt, 'write_series', side_effect=broken):
            exc = self.assertRaises(errors.PatchError, export.export,
                                    self.base)
        self.assertIn('quilt push -a fails on nova 1.0.0', str(exc))
        self.assertFalse((self.project.root / 'dist' / 'fake').exists())


class CherryPickTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        root = self.project.root
        source = build.build(config.get_base(root, 'fake'))
        shas = gitutils.out(source, 'rev-list', '--reverse',
                            '1.0.0..HEAD').split()
        old = root / 'patches' / 'old'
        old.mkdir()
        self.shas = shas
        for name, sha in zip(sorted(
                p.name for p in (root / 'patches/fake').iterdir()
                if p.name != 'series'), shas):
            text = (root / 'patches/fake' / name).read_text()
            line = '(cherry picked from commit %s)\n' % sha
            if name.endswith('.patch'):
                text = text.replace('\n---\n', '\n' + line + '---\n', 1)
            else:
                text += line
            (old / name).write_text(text)
        (old / 'series').write_text(
            (root / 'patches/fake/series').read_text())
        bases = root / 'bases.ini'
        text = bases.read_text()
        bases.write_text(text + '\n' + text.replace('[fake]', '[old]')
                         .replace('patches/fake', 'patches/old') +
                         'backport_of = fake\n')

    def test_cherry_picks_name_the_source_commits(self):
        base = config.get_base(self.project.root, 'old')
        dest = export.export(base)
        self.assertIn('(cherry picked from commit %s)' % self.shas[1],
                      (dest / '0002-Fix-manager.patch').read_text())

    def test_wrong_cherry_pick_is_refused(self):
        patch = self.project.root / 'patches/old/0001-Fix-claims.patch'
        patch.write_text(patch.read_text().replace(self.shas[0],
                                                   self.shas[1]))
        base = config.get_base(self.project.root, 'old')
        exc = self.assertRaises(errors.PatchError, export.export, base)
        self.assertIn('old: "Fix claims" says it is cherry picked from %s, '
                      'which is not the commit with its Change-Id'
                      % self.shas[1][:12], str(exc))
