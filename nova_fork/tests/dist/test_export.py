import io
import os
import shutil
from unittest import mock

import fixtures
import testtools

from nova_fork import config
from nova_fork.dist import export
from nova_fork.dist import quilt
from nova_fork import errors
from nova_fork import progress
from nova_fork.tests import fakes


def exported(base):
    """(dest, what export said on stderr)."""
    stderr = io.StringIO()
    with progress.shown(), mock.patch('sys.stderr', stderr):
        dest = export.export(base)
    return dest, stderr.getvalue()


def as_user(test, root, ident):
    """The user's git identity, from a global configuration of theirs."""
    config_file = root / '.gitconfig-user'
    config_file.write_text('[user]\n\tname = %s\n\temail = %s\n' % ident)
    test.useFixture(fixtures.EnvironmentVariable(
        'GIT_CONFIG_GLOBAL', str(config_file)))


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
        self.assertIn('\nFrom: t <t@example.org>\n', text)

    def test_export_names_the_user_as_author(self):
        project = self.useFixture(fakes.FakeProject())
        as_user(self, project.root, ('Pat Packager', 'pat@example.org'))
        dest, said = exported(config.get_base(project.root, 'fake'))
        text = (dest / '0002-Fix-manager.patch').read_text()
        self.assertIn('\nFrom: Pat Packager <pat@example.org>\n', text)
        self.assertNotIn('From: t <t@example.org>', text)
        self.assertIn('author: Pat Packager <pat@example.org>, your git '
                      'identity', said)

    def test_export_without_a_git_identity_says_so(self):
        project = self.useFixture(fakes.FakeProject())
        self.assertEqual(os.devnull, os.environ['GIT_CONFIG_GLOBAL'])
        _, said = exported(config.get_base(project.root, 'fake'))
        self.assertIn("author: the commits' own, as no git identity is set "
                      '(git config --global user.name', said)

    def test_export_refuses_a_series_that_does_not_reproduce(self):
        project = self.useFixture(fakes.FakeProject())
        base = config.get_base(project.root, 'fake')
        real = export.format_patch

        def first_only(tree, since, outdir, author):
            return real(tree, since, outdir, author)[:1]

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

    def test_dep3_author_is_the_user(self):
        as_user(self, self.project.root, ('Pat Packager', 'pat@example.org'))
        dest, _ = exported(self.base)
        text = (dest / 'quilt' / '0002-Fix-manager.patch').read_text()
        self.assertIn('\nAuthor: Pat Packager <pat@example.org>\n', text)

    def test_quilt_series_that_does_not_push(self):
        real = quilt.write_series

        def broken(tree, since, outdir, bug, author):
            names = real(tree, since, outdir, bug, author)
            patch = outdir / names[0]
            patch.write_text(patch.read_text().replace(
                '     def abort(self):', '     def abandon(self):'))
            return names

        with mock.patch.object(quilt, 'write_series', side_effect=broken):
            exc = self.assertRaises(errors.PatchError, export.export,
                                    self.base)
        self.assertIn('quilt push -a fails on nova 1.0.0', str(exc))
        self.assertFalse((self.project.root / 'dist' / 'fake').exists())
