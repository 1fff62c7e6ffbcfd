import io
import pathlib
import tarfile
from unittest import mock

import testtools

from nova_fork import cmd
from nova_fork import config
from nova_fork.dist import sdist
from nova_fork import errors
from nova_fork.tests import fakes
from nova_fork.tree import gitutils


def fake_make(drop=()):
    """A stand-in for pbr's sdist: the clone's files and a PKG-INFO."""

    def make(base, tree, src, out, version):
        out.mkdir()
        top = 'nova-%s' % version
        path = out / ('%s.tar.gz' % top)
        with tarfile.open(path, 'w:gz') as tar:
            for name in gitutils.out(src, 'ls-files').splitlines():
                if name not in drop:
                    tar.add(str(src / name), '%s/%s' % (top, name))
            info = ('Name: nova\nVersion: %s\n' % version).encode()
            member = tarfile.TarInfo('%s/PKG-INFO' % top)
            member.size = len(info)
            tar.addfile(member, io.BytesIO(info))
        return path, 'a fake sdist'
    return make


class VersionTest(testtools.TestCase):

    def test_post_release_named_after_the_bug(self):
        self.assertEqual('18.3.0.post1860555',
                         sdist.patched_version('18.3.0', '1860555'))

    def test_sorts_after_the_release_and_before_the_next(self):
        # pip's own reading of versions (pip vendors packaging)
        try:
            from packaging import version
        except ImportError:
            try:
                from pip._vendor.packaging import version
            except ImportError:
                self.skipTest('neither packaging nor pip is installed')
        patched = version.Version(sdist.patched_version('34.0.0', '1860555'))
        self.assertLess(version.Version('34.0.0'), patched)
        self.assertLess(patched, version.Version('34.0.1'))
        self.assertTrue(patched.is_postrelease)
        self.assertIsNone(patched.local)

    def test_refuses_a_pre_release(self):
        exc = self.assertRaises(errors.UsageError, sdist.patched_version,
                                '34.0.0.0rc1', '1')
        self.assertIn('not a final release', str(exc))


class ContentsTest(testtools.TestCase):

    def test_one_top_folder(self):
        self.assertEqual(
            ['it has 2 top-level folders, not one'],
            sdist.tarball_problems(['a/PKG-INFO', 'b/x'], {}.get, '1', {}))

    def test_no_pkg_info(self):
        self.assertEqual(['it has no a/PKG-INFO'],
                         sdist.tarball_problems(['a/x'], {}.get, '1', {}))

    def test_a_gitignore_is_no_git_metadata(self):
        files = {'a/PKG-INFO': b'Version: 1\n', 'a/.gitignore': b''}
        self.assertEqual([], sdist.tarball_problems(list(files), files.get,
                                                    '1', {}))

    def test_nova_in(self):
        lib = pathlib.Path(self.useFixture(fakes.fixtures.TempDir()).path)
        self.assertEqual([], sdist.nova_in(lib))
        (lib / 'nova-1.0.dist-info').mkdir()
        (lib / 'novaclient').mkdir()
        self.assertEqual([lib / 'nova-1.0.dist-info'], sdist.nova_in(lib))

    def test_build_backend_of_a_setup_py_release(self):
        self.assertIsNone(sdist.build_backend(''))
        self.assertIsNone(sdist.build_backend(
            '[build-system]\nrequires = ["pbr"]\n'))


class SdistTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        self.base = config.get_base(self.project.root, 'fake')
        self.dist = self.project.root / 'dist' / 'sdist'

    def test_writes_the_checked_tarball(self):
        with mock.patch.object(sdist, 'make', fake_make()):
            path, notes = sdist.sdist(self.base)
        self.assertEqual(self.dist / 'fake' / 'nova-1.0.0.post1860555.tar.gz',
                         path)
        self.assertEqual(['fake'], [p.name for p in self.dist.iterdir()])
        self.assertIn('the 4 files the fork changes', notes[1])
        with tarfile.open(path) as tar:
            claims = tar.extractfile(
                'nova-1.0.0.post1860555/nova/compute/claims.py').read()
        self.assertEqual(fakes.FIXED_CLAIMS.encode(), claims)

    def test_the_tree_is_left_as_it_was(self):
        tree = self.project.root / 'build' / 'fake'
        with mock.patch.object(sdist, 'make', fake_make()):
            sdist.sdist(self.base)
        self.assertEqual('', gitutils.out(tree, 'status', '--porcelain'))

    def test_version_from_bases_ini(self):
        bases = self.project.root / 'bases.ini'
        bases.write_text(bases.read_text().replace('id = 1860555',
                                                   'id = 42'))
        with mock.patch.object(sdist, 'make', fake_make()):
            path, _ = sdist.sdist(self.base)
        self.assertEqual('nova-1.0.0.post42.tar.gz', path.name)

    def test_a_missing_fix_writes_nothing(self):
        with mock.patch.object(sdist, 'make', fake_make()):
            sdist.sdist(self.base)
        with mock.patch.object(
                sdist, 'make', fake_make(drop=('nova/pci/manager.py',))):
            exc = self.assertRaises(errors.PackageError, sdist.sdist,
                                    self.base)
        self.assertIn('nova/pci/manager.py is missing', str(exc))
        # the last good tarball stays, and nothing half-made is left
        self.assertEqual(['fake'], [p.name for p in self.dist.iterdir()])
        self.assertEqual(['nova-1.0.0.post1860555.tar.gz'],
                         [p.name for p in (self.dist / 'fake').iterdir()])

    def test_command_prints_the_tarball(self):
        with mock.patch.object(sdist, 'make', fake_make()), \
                mock.patch('sys.stdout', new_callable=io.StringIO) as out:
            self.assertEqual(0, cmd.main(['-q', 'sdist', 'fake']))
        self.assertTrue(out.getvalue().endswith(
            'dist/sdist/fake/nova-1.0.0.post1860555.tar.gz\n'))

    def test_command_failure_is_one_line(self):
        make = fake_make(drop=('nova/compute/claims.py',))
        with mock.patch.object(sdist, 'make', make), \
                mock.patch('sys.stderr', new_callable=io.StringIO) as err:
            self.assertEqual(8, cmd.main(['-q', 'sdist', 'fake']))
        self.assertEqual(1, len(err.getvalue().splitlines()))
        self.assertIn('nova/compute/claims.py is missing', err.getvalue())

    def test_tests_after_double_dash(self):
        with mock.patch.object(sdist, 'sdist',
                               return_value=(pathlib.Path('x'), [])) as fn, \
                mock.patch('sys.stdout', new_callable=io.StringIO):
            cmd.main(['sdist', 'fake', '--check', '--', 'test_a'])
        fn.assert_called_once_with(self.base, check=True, tests=['test_a'])
