import gzip
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
from unittest import mock

import fixtures
import testtools

from nova_fork import cmd
from nova_fork import errors
from nova_fork import located
from nova_fork.tests import fakes


def nova_package(folder, claims=fakes.CLAIMS, manager=fakes.MANAGER):
    """The two files the units are read in, as an installed nova has them."""
    for name, text in (('nova/__init__.py', ''),
                       ('nova/compute/claims.py', claims),
                       ('nova/pci/manager.py', manager)):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def metadata(path, version):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('Metadata-Version: 2.1\nName: nova\nVersion: %s\n\n'
                    'Cloud computing fabric controller\n' % version)


def debian_package(root, version='1.0.0', changelog_version='2:1.0.0-1',
                   suite='bookworm-security', claims=fakes.CLAIMS):
    """python3-nova's files under ROOT, as dpkg-deb -x unpacks them."""
    site = root / 'usr' / 'lib' / 'python3' / 'dist-packages'
    nova_package(site, claims=claims)
    metadata(site / ('nova-%s.egg-info' % version) / 'PKG-INFO', version)
    doc = root / 'usr' / 'share' / 'doc' / 'python3-nova'
    doc.mkdir(parents=True)
    with gzip.open(doc / 'changelog.Debian.gz', 'wt') as f:
        f.write('nova (%s) %s; urgency=medium\n\n  * Fixes.\n'
                % (changelog_version, suite))
    return site


class CheckPathTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        self.tmp = pathlib.Path(self.useFixture(fixtures.TempDir()).path)

    def check(self, *args):
        with mock.patch('sys.stdout', new_callable=io.StringIO) as out, \
                mock.patch('sys.stderr', new_callable=io.StringIO) as err:
            code = cmd.main(['-q', 'check'] + list(args))
        return code, out.getvalue(), err.getvalue()

    def test_source_tree_with_pkg_info(self):
        tree = self.tmp / 'nova-1.0.3'
        nova_package(tree)
        metadata(tree / 'PKG-INFO', '1.0.3')
        code, out, _ = self.check('--path', str(tree))
        self.assertEqual(1, code)
        self.assertTrue(out.startswith(
            'nova 1.0.3 (one) in %s (version from PKG-INFO)\n' % tree), out)
        self.assertIn('needs claim-abort, free-instance of the fix for bug '
                      '1860555: nova-fork build fake --release 1.0.3\n', out)

    def test_site_packages_with_a_dist_info(self):
        # a distribution backported the claims fix without a new version
        site = self.tmp / 'site-packages'
        nova_package(site, claims=fakes.FIXED_CLAIMS)
        metadata(site / 'nova-1.0.0.dist-info' / 'METADATA', '1.0.0')
        code, out, _ = self.check('--path', str(site / 'nova'), '--json')
        self.assertEqual(1, code)
        self.assertEqual({'version': '1.0.0', 'line': 'fake',
                          'has': ['claim-abort'], 'needs': ['free-instance'],
                          'path': str(site)}, json.loads(out))

    def test_fixed_code_needs_nothing(self):
        site = self.tmp / 'site-packages'
        nova_package(site, fakes.FIXED_CLAIMS, fakes.FIXED_MANAGER)
        metadata(site / 'nova-1.0.0.egg-info' / 'PKG-INFO', '1.0.0')
        code, out, _ = self.check('--path', str(site))
        self.assertEqual(0, code)
        self.assertIn('nova 1.0.0 has every unit of the fix for bug 1860555',
                      out)

    def test_git_tree(self):
        tree = self.tmp / 'nova'
        nova_package(tree)
        fakes.git(tree, 'init', '-q')
        fakes.git(tree, 'add', '-A')
        fakes.git(tree, 'commit', '-q', '-m', 'nova')
        fakes.git(tree, 'tag', '1.0.3')
        (tree / 'nova' / 'x.py').write_text('')
        fakes.git(tree, 'add', '-A')
        fakes.git(tree, 'commit', '-q', '-m', 'more')
        code, out, _ = self.check('--path', str(tree))
        self.assertEqual(1, code)
        self.assertIn('(version from git describe)', out)
        self.assertIn('1.0.3-1-g', out.splitlines()[0])
        self.assertIn('is no release: the series of line fake for its '
                      'release, nova-fork export fake --release 1.0.3', out)

    def test_debian_package(self):
        site = debian_package(self.tmp / 'deb')
        code, out, _ = self.check('--path', str(site), '--json')
        self.assertEqual(1, code)
        self.assertEqual({'version': '2:1.0.0-1', 'suite': 'bookworm'},
                         json.loads(out)['debian'])
        code, out, _ = self.check('--path', str(site))
        self.assertIn('(version from nova-1.0.0.egg-info/PKG-INFO; Debian '
                      '2:1.0.0-1, bookworm)', out)
        self.assertIn('needs claim-abort, free-instance of the fix for bug '
                      '1860555: nova-fork debian bookworm (the series for '
                      "Debian bookworm's own package)", out)

    def test_a_deb_built_with_dpkg_deb(self):
        if not shutil.which('dpkg-deb'):
            self.skipTest('needs dpkg-deb')
        pkg = self.tmp / 'pkg'
        debian_package(pkg, suite='trixie', changelog_version='2:1.0.0-2',
                       claims=fakes.FIXED_CLAIMS)
        deb = fakes.python3_nova_deb(pkg, '2:1.0.0-2',
                                     self.tmp / 'python3-nova.deb')
        unpacked = self.tmp / 'unpacked'
        subprocess.run(['dpkg-deb', '-x', str(deb), str(unpacked)],
                       check=True)
        code, out, _ = self.check('--path', str(
            unpacked / 'usr/lib/python3/dist-packages'))
        self.assertEqual(1, code)
        self.assertIn('  has    claim-abort', out)
        self.assertIn('needs free-instance of the fix for bug 1860555: '
                      'nova-fork debian trixie', out)

    def test_installed(self):
        # the interpreter imports the fake nova; importlib only finds it
        site = self.tmp / 'site-packages'
        nova_package(site)
        (site / 'nova' / '__init__.py').write_text(
            'raise ImportError("nova imported")\n')
        metadata(site / 'nova-1.0.3.dist-info' / 'METADATA', '1.0.3')
        self.useFixture(fixtures.EnvironmentVariable('PYTHONPATH', str(site)))
        code, out, err = self.check('--installed', '--python',
                                    sys.executable, '--json')
        self.assertEqual(1, code, err)
        self.assertEqual(('1.0.3', str(site)),
                         (json.loads(out)['version'], json.loads(out)['path']))

    def test_installed_nowhere(self):
        self.useFixture(fixtures.EnvironmentVariable('PYTHONPATH', os.devnull))
        code, _, err = self.check('--installed', '--python', sys.executable)
        self.assertEqual(2, code)
        self.assertIn('has no nova to import', err)

    def test_no_nova_or_no_version(self):
        code, _, err = self.check('--path', str(self.tmp))
        self.assertEqual(2, code)
        self.assertIn('holds no nova package', err)
        nova_package(self.tmp)
        exc = self.assertRaises(errors.UsageError, located.find, self.tmp)
        self.assertIn('cannot tell which nova', str(exc))

    def test_version_and_path_exclude_each_other(self):
        self.assertRaises(SystemExit, self.check, '1.0.0', '--path', 'x')
