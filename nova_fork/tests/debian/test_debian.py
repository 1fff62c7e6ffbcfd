"""nova-fork debian: a series for a Debian suite's own nova package.

A fake suite ships the fake project's nova 1.0.0 with one Debian patch;
the archive is a dict of local files, so nothing is downloaded.
"""

import io
import pathlib
import shutil
import tarfile
import textwrap

import fixtures
import testtools

from nova_fork.debian import archive
from nova_fork.debian import debsource
from nova_fork.debian import debstack
from nova_fork.debian import series
from nova_fork import errors
from nova_fork.tests import fakes

CONTROL = textwrap.dedent('''\
    Source: nova
    Maintainer: Debian OpenStack <team+openstack@tracker.debian.org>
    Standards-Version: 4.6.0

    Package: python3-nova
    Architecture: all
    Description: fake
     fake
    ''')

CHANGELOG = textwrap.dedent('''\
    nova (2:1.0.0-1) bookworm; urgency=medium

      * Fake.

     -- Debian <debian@example.org>  Thu, 01 Jan 2026 00:00:00 +0000
    ''')

# Debian's own patch: setup.cfg, which the fork does not touch
DEBIAN_PATCH = textwrap.dedent('''\
    Description: Debian's own change
    Author: Debian <debian@example.org>
    Forwarded: not-needed
    ---
    --- a/setup.cfg
    +++ b/setup.cfg
    @@ -1,2 +1,3 @@
     [metadata]
     name = nova
    +summary = Debian
    ''')

RULES = ("#!/usr/bin/make -f\n%:\n\tdh $@\n"
         "override_dh_auto_test:\n"
         "\tpkgos-dh_auto_test --no-py2 'nova\\.tests\\.(?!(.*Slow.*))'\n")


def debian_tarball(path, patch=DEBIAN_PATCH):
    files = {
        'debian/source/format': '3.0 (quilt)\n',
        'debian/control': CONTROL,
        'debian/changelog': CHANGELOG,
        'debian/rules': RULES,
        'debian/patches/series': 'debian-own.patch\n',
        'debian/patches/debian-own.patch': patch,
    }
    with tarfile.open(path, 'w:xz') as tar:
        for name, text in sorted(files.items()):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


class FakeArchive(fixtures.Fixture):
    """The suite's nova versions, newest first; files by name."""

    def __init__(self, project, versions):
        super().__init__()
        self.project = project
        self.versions = versions

    def _setUp(self):
        here = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        self.files = {}
        packages = []
        for version, has_tarball in self.versions:
            tarball = 'nova_%s.debian.tar.xz' % version.split(':')[-1]
            orig = 'nova_1.0.0.orig.tar.gz'
            if has_tarball:
                debian_tarball(here / tarball)
                self.files[tarball] = here / tarball
            self.files[orig] = self.project.sdist
            packages.append(archive.Package(
                'nova', version, 'bookworm',
                ((tarball, 'u', 's'), (orig, 'u', 's'))))
        self.useFixture(fixtures.MockPatch(
            'nova_fork.debian.archive.sources', lambda suite: packages))
        self.useFixture(fixtures.MockPatch(
            'nova_fork.debian.archive.fetch',
            lambda root, entry: self.files.get(entry[0])))


class DebianTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        if not (shutil.which('quilt') and shutil.which('dpkg-source')):
            self.skipTest('needs quilt and dpkg-source')
        self.project = self.useFixture(fakes.FakeProject())
        # the fake line is the series of nova 1.x
        bases = self.project.root / 'bases.ini'
        bases.write_text(bases.read_text().replace('[fake]', '[one]'))
        self.said = []

    def make(self, versions=(('2:1.0.0-1', True),)):
        self.useFixture(FakeArchive(self.project, list(versions)))
        return series.make(self.project.root, 'bookworm', tests=False,
                           say=self.said.append)

    def test_series_after_debian_patches(self):
        dest = self.make()
        names = ['lp1860555-0001-Fix-claims.patch',
                 'lp1860555-0002-Fix-manager.patch']
        self.assertEqual(''.join(n + '\n' for n in names),
                         (dest / 'series').read_text())
        patch = (dest / names[0]).read_text()
        self.assertIn('Description: Fix claims\n', patch)
        self.assertIn('Origin: vendor, nova-fork line one (nova 1.0.0), '
                      'commit ', patch)
        self.assertIn('Bug: https://bugs.launchpad.net/nova/+bug/1860555\n',
                      patch)
        self.assertIn('Forwarded: no\n', patch)
        self.assertIn('Last-Update: ', patch)
        self.assertIn('+        self._ref = instance', patch)
        self.assertIn("  1. quilt push -a --fuzz=0: Debian's patches, then 2 "
                      'of ours: ok', self.said)
        self.assertIn('  2. dpkg-source -b: nova_1.0.0-1.dsc; dpkg-source -x '
                      'applies it: ok', self.said)
        self.assertIn('Author: t <t@example.org>\n', patch)
        self.assertIn("  author: the commits' own, as no git identity is set "
                      '(git config --global user.name "Your Name"; git '
                      'config --global user.email you@example.org)',
                      self.said)

    def test_series_author_is_the_user(self):
        self.useFixture(fixtures.EnvironmentVariable(
            'GIT_AUTHOR_NAME', 'Deb Packager'))
        self.useFixture(fixtures.EnvironmentVariable(
            'GIT_AUTHOR_EMAIL', 'deb@example.org'))
        dest = self.make()
        patch = (dest / 'lp1860555-0001-Fix-claims.patch').read_text()
        self.assertIn('Author: Deb Packager <deb@example.org>\n', patch)
        self.assertIn('  author: Deb Packager <deb@example.org>, your git '
                      'identity', self.said)

    def test_missing_debian_tarball_takes_the_newest_there(self):
        self.make([('2:1.0.0-2', False), ('2:1.0.0-1', True)])
        self.assertEqual('Debian bookworm: nova 2:1.0.0-1 (current: '
                         '2:1.0.0-2)', self.said[0])
        self.assertIn('the archive lacks nova_1.0.0-2.debian.tar.xz',
                      self.said[1])

    def test_no_debian_tarball_at_all(self):
        exc = self.assertRaises(errors.FetchError, self.make,
                                [('2:1.0.0-1', False)])
        self.assertIn('the archive has no debian tarball of nova for any '
                      'of 2:1.0.0-1', str(exc))
        self.assertFalse(series.dist_dir(self.project.root,
                                         'bookworm').exists())

    def test_a_fixed_release_needs_no_series(self):
        self.project.add_release(
            '1.0.0', claims=fakes.FIXED_CLAIMS, manager=fakes.FIXED_MANAGER,
            **{'setup.cfg': '[metadata]\nname = nova\n'})
        exc = self.assertRaises(errors.AlreadyFixed, self.make)
        self.assertIn('has every unit of the fix', str(exc))

    def test_debian_patch_that_needs_fuzz_is_refused(self):
        tree = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        (tree / 'setup.cfg').write_text('[other]\nname = nova\n')
        (tree / 'debian' / 'patches').mkdir(parents=True)
        (tree / 'debian' / 'patches' / 'series').write_text('p.patch\n')
        (tree / 'debian' / 'patches' / 'p.patch').write_text(DEBIAN_PATCH)
        exc = self.assertRaises(errors.PatchError, debsource.push, tree,
                                'a patch')
        self.assertIn('quilt push -a --fuzz=0 of a patch fails', str(exc))


class BinaryTest(testtools.TestCase):
    """An sdist standing in for the orig must give python3-nova's files."""

    def setUp(self):
        super().setUp()
        if not shutil.which('dpkg-deb'):
            self.skipTest('needs dpkg-deb')
        self.root = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        self.tree = self.root / 'tree'
        (self.tree / 'nova').mkdir(parents=True)
        (self.tree / 'nova' / 'a.py').write_text('a = 1\n')
        self.source = debsource.Source(
            'bookworm', archive.Package('nova', '2:1.0.0-1', 'bookworm', ()),
            None, None, None, (), sdist_as_orig=True)

    def deb(self, text):
        pkg = self.root / 'pkg'
        site = pkg / 'usr' / 'lib' / 'python3' / 'dist-packages' / 'nova'
        site.mkdir(parents=True)
        (site / 'a.py').write_text(text)
        deb = fakes.python3_nova_deb(pkg, '2:1.0.0-1',
                                     self.root / 'python3-nova.deb')
        binary = archive.Package('python3-nova', '2:1.0.0-1', 'bookworm',
                                 (('python3-nova.deb', 'u', 's'),))
        self.useFixture(fixtures.MockPatch(
            'nova_fork.debian.archive.binaries', lambda suite: [binary]))
        self.useFixture(fixtures.MockPatch(
            'nova_fork.debian.archive.fetch', lambda root, entry: deb))

    def test_same_files(self):
        self.deb('a = 1\n')
        self.assertEqual("its 1 nova/*.py files match python3-nova "
                         "2:1.0.0-1's", debsource.compare_binary(
                             self.root, self.source, self.tree))

    def test_a_file_that_differs(self):
        self.deb('a = 2\n')
        exc = self.assertRaises(errors.PackageError,
                                debsource.compare_binary, self.root,
                                self.source, self.tree)
        self.assertIn('1 of 1 files differ (nova/a.py)', str(exc))


class StackTest(testtools.TestCase):

    def test_debian_filter_is_the_rules_selection(self):
        tree = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        (tree / 'debian').mkdir()
        (tree / 'debian' / 'rules').write_text(RULES)
        self.assertEqual(r'nova\.tests\.(?!(.*Slow.*))',
                         debstack.debian_filter(tree))

    def test_no_rules_no_filter(self):
        tree = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        self.assertIsNone(debstack.debian_filter(tree))


class ArchiveTest(testtools.TestCase):

    def test_newest_first_by_dpkg(self):
        if not shutil.which('dpkg'):
            self.skipTest('needs dpkg')
        found = archive.newest_first([
            archive.Package('nova', v, 'p', ())
            for v in ('2:26.2.2-1~deb12u4', '2:26.2.2-1~deb12u5',
                      '2:26.2.2-1', '2:26.2.2-1~deb12u4')])
        self.assertEqual(['2:26.2.2-1', '2:26.2.2-1~deb12u5',
                          '2:26.2.2-1~deb12u4'], [p.version for p in found])

    def test_fetch_refuses_a_wrong_hash(self):
        root = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        self.useFixture(fixtures.MockPatch('nova_fork.debian.archive._get',
                                           lambda url: b'data'))
        exc = self.assertRaises(errors.HashMismatch, archive.fetch, root,
                                ('f.dsc', 'u', '0' * 64))
        self.assertIn('its index says', str(exc))
        self.assertFalse((archive.cache_dir(root) / 'f.dsc').exists())

    def test_fetch_of_a_file_the_archive_lacks(self):
        root = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        self.useFixture(fixtures.MockPatch('nova_fork.debian.archive._get',
                                           lambda url: None))
        self.assertIsNone(archive.fetch(root, ('f.dsc', 'u', '0' * 64)))
