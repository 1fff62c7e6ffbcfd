import pathlib
from unittest import mock

import testtools

from nova_fork import config
from nova_fork import errors
from nova_fork.tests import fakes
from nova_fork.tree import build
from nova_fork.tree import gitutils


class BuildTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        self.base = config.get_base(self.project.root, 'fake')

    def log(self, tree):
        return gitutils.out(tree, 'log', '--format=%s', '--reverse')

    def test_fork(self):
        tree = build.build(self.base)
        self.assertEqual(self.project.root / 'build' / 'fake', tree)
        self.assertEqual(
            'Import nova 1.0.0\nFix claims\nFix manager\nAdd regression tests',
            self.log(tree))
        self.assertIn('self._ref',
                      (tree / 'nova/compute/claims.py').read_text())
        self.assertTrue((tree / 'nova/tests/test_fake.py').is_file())
        # the release note rides with the commit that lists it
        self.assertEqual(
            'nova/pci/manager.py\nreleasenotes/notes/fake.yaml',
            gitutils.out(tree, 'show', '--format=', '--name-only',
                         'HEAD~1'))
        self.assertEqual(gitutils.out(tree, 'rev-parse', 'HEAD~3'),
                         gitutils.out(tree, 'rev-parse', '1.0.0^{commit}'))

    def test_pristine_has_only_the_test_commit(self):
        tree = build.build(self.base, pristine=True)
        self.assertEqual('fake-pristine', tree.name)
        self.assertEqual('Import nova 1.0.0\nAdd regression tests',
                         self.log(tree))
        self.assertNotIn('_ref',
                         (tree / 'nova/compute/claims.py').read_text())

    def test_release_has_none_of_the_fork(self):
        tree = build.build(self.base, release=True)
        self.assertEqual('fake-release', tree.name)
        self.assertEqual('Import nova 1.0.0', self.log(tree))

    def test_without(self):
        tree = build.build(self.base, without='claim-abort')
        self.assertEqual('fake-without-claim-abort', tree.name)
        self.assertEqual(
            'Import nova 1.0.0\nFix manager\nAdd regression tests',
            self.log(tree))

    def test_a_left_out_fix_keeps_its_tests(self):
        # The fix of claims also adds a unit test: the pristine release and
        # a mutant get the test, not the fix, as the test must fail there.
        repo = self.project.root.parent / (self.project.root.name + '-p')
        repo.mkdir()
        fakes.git(repo, 'init', '-q')
        (repo / 'nova/compute').mkdir(parents=True)
        (repo / 'nova/compute/claims.py').write_text(fakes.CLAIMS)
        fakes.git(repo, 'add', '-A')
        fakes.git(repo, 'commit', '-qm', 'old')
        (repo / 'nova/compute/claims.py').write_text(fakes.FIXED_CLAIMS)
        (repo / 'nova/tests/unit').mkdir(parents=True)
        (repo / 'nova/tests/unit/test_claims.py').write_text('# test\n')
        fakes.git(repo, 'add', '-A')
        fakes.git(repo, 'commit', '-qm', 'Fix claims\n\nWhy.')
        (self.base.patches / '0001-Fix-claims.patch').write_text(
            fakes.git(repo, 'format-patch', '--stdout', '-1'))

        for kwargs in ({'pristine': True}, {'without': 'claim-abort'}):
            tree = build.build(self.base, **kwargs)
            self.assertIn('The tests of 0001-Fix-claims.patch, without its '
                          'fix', self.log(tree))
            self.assertTrue((tree / 'nova/tests/unit/test_claims.py')
                            .is_file())
            self.assertNotIn('_ref', (tree / 'nova/compute/claims.py')
                             .read_text())
        tree = build.build(self.base)
        self.assertIn('_ref', (tree / 'nova/compute/claims.py').read_text())

    def test_without_takes_the_units_that_build_on_it(self):
        series = self.base.patches / 'series'
        series.write_text(series.read_text().replace(
            'unit=free-instance', 'unit=free-instance needs=claim-abort'))
        tree = build.build(self.base, without='claim-abort')
        self.assertEqual('Import nova 1.0.0\nAdd regression tests',
                         self.log(tree))

    def test_series_variant_of_a_new_file(self):
        variant = self.base.patches / 'files' / 'nova/tests/test_fake.py'
        variant.parent.mkdir(parents=True)
        variant.write_text('# the variant for this series\n')
        tree = build.build(self.base)
        self.assertEqual('# the variant for this series\n',
                         (tree / 'nova/tests/test_fake.py').read_text())

    def test_another_release_of_the_series(self):
        sha256 = self.project.add_release('0.9.0')
        self.project.append('releases = 0.9.0 %s\n' % sha256)
        base = config.get_base(self.project.root, 'fake').for_release('0.9.0')
        tree = build.build(base, pristine=True)
        self.assertEqual('fake-0.9.0-pristine', tree.name)
        self.assertEqual('Import nova 0.9.0\nAdd regression tests',
                         self.log(tree))
        self.assertEqual(self.base.sha256, base.for_release('1.0.0').sha256)
        exc = self.assertRaises(errors.UsageError, base.for_release,
                                '0.8.0')
        self.assertIn('series fake is not set up for nova 0.8.0; its '
                      'releases are 1.0.0, 0.9.0', str(exc))

    def test_release_with_part_of_the_fix_gets_the_rest(self):
        # upstream fixed the tracker in 1.0.1, written its own way
        sha256 = self.project.add_release(
            '1.0.1', manager=fakes.FIXED_MANAGER.replace(
                '    for dev in self.pci_devs:\n',
                '    devs = list(self.pci_devs)\n'
                '        for dev in devs:\n'))
        self.project.append('releases = 1.0.1 %s\n' % sha256)
        base = config.get_base(self.project.root, 'fake').for_release(
            '1.0.1')
        tree = build.build(base)
        self.assertEqual(
            'Import nova 1.0.1\nFix claims\nAdd regression tests',
            self.log(tree))
        # its mutants leave out only what it lacks
        exc = self.assertRaises(errors.UsageError, build.build, base,
                                without='free-instance')
        self.assertIn('has no commit of unit free-instance to leave out; it '
                      'carries claim-abort', str(exc))

    def test_without_unknown_unit(self):
        exc = self.assertRaises(errors.UsageError, build.build, self.base,
                                without='nosuch')
        self.assertIn('has no commit of unit nosuch', str(exc))

    def test_code_the_units_cannot_read(self):
        sha256 = self.project.add_release('1.0.2', claims='# moved away\n')
        self.project.append('releases = 1.0.2 %s\n' % sha256)
        exc = self.assertRaises(errors.ForkError, build.build,
                                config.get_base(self.project.root,
                                                'fake').for_release('1.0.2'))
        self.assertEqual('cannot tell which units of the fix nova 1.0.2 '
                         'has: nova/compute/claims.py has none of '
                         'Claim.abort', str(exc))
        self.assertFalse((self.project.root / 'build').exists())

    def test_reproducible_commit_ids(self):
        first = gitutils.out(build.build(self.base), 'rev-parse', 'HEAD')
        other = self.useFixture(fakes.FakeProject())
        base = config.get_base(other.root, 'fake')
        self.assertEqual(first,
                         gitutils.out(build.build(base), 'rev-parse', 'HEAD'))

    def test_rerun_reuses_the_tree(self):
        tree = build.build(self.base)
        marker = tree / 'marker'
        marker.write_text('kept')
        with mock.patch.object(build, 'import_sdist') as importer:
            self.assertEqual(tree, build.build(self.base))
        importer.assert_not_called()
        self.assertTrue(marker.exists())

    def test_changed_input_rebuilds(self):
        tree = build.build(self.base)
        (self.project.root / 'nova/tests/test_fake.py').write_text('# new\n')
        build.build(self.base)
        self.assertEqual('# new\n',
                         (tree / 'nova/tests/test_fake.py').read_text())

    def test_interrupted_build_leaves_nothing(self):
        with mock.patch.object(build, 'apply_commit',
                               side_effect=KeyboardInterrupt):
            self.assertRaises(KeyboardInterrupt, build.build, self.base)
        folder = self.project.root / 'build'
        # only the release's import, which is complete
        self.assertEqual([build.IMPORTS],
                         [p.name for p in folder.iterdir()])
        self.assertEqual(['1.0.0'], [p.name for p in
                                     (folder / build.IMPORTS).iterdir()])

    def test_the_release_is_imported_once(self):
        with mock.patch.object(build, 'import_sdist',
                               wraps=build.import_sdist) as importer:
            fork = build.build(self.base)
            pristine = build.build(self.base, pristine=True)
            without = build.build(self.base, without='free-instance')
        self.assertEqual(1, importer.call_count)
        # each tree is what an import of its own would be
        heads = {gitutils.out(tree, 'rev-parse', '1.0.0^{commit}')
                 for tree in (fork, pristine, without)}
        self.assertEqual(1, len(heads))
        for tree in (fork, pristine, without):
            self.assertEqual('', gitutils.out(tree, 'remote'))
            self.assertEqual('', gitutils.out(tree, 'status', '--short'))
            self.assertEqual('master', gitutils.out(
                tree, 'rev-parse', '--abbrev-ref', 'HEAD'))

    def test_each_release_has_its_import(self):
        build.build(self.base)
        sha256 = self.project.add_release('1.0.1', **{'extra.txt': 'new\n'})
        self.project.append('releases = 1.0.1 %s\n' % sha256)
        base = config.get_base(self.project.root, 'fake').for_release(
            '1.0.1')
        tree = build.build(base)
        self.assertEqual('new\n', (tree / 'extra.txt').read_text())
        imports = self.project.root / 'build' / build.IMPORTS
        self.assertEqual(['1.0.0', '1.0.1'],
                         sorted(p.name for p in imports.iterdir()))
        # an import whose stamp is not its sdist's is made again
        (imports / '1.0.1' / '.git' / build.STAMP).write_text('old\n')
        (tree / '.git' / build.STAMP).write_text('old\n')
        with mock.patch.object(build, 'import_sdist',
                               wraps=build.import_sdist) as importer:
            build.build(base)
        self.assertEqual(1, importer.call_count)

    def test_interrupted_rebuild_keeps_no_stale_stamp(self):
        build.build(self.base)
        (self.project.root / 'nova/tests/test_fake.py').write_text('# new\n')
        with mock.patch.object(build, 'apply_commit',
                               side_effect=RuntimeError('boom')):
            self.assertRaises(RuntimeError, build.build, self.base)
        # the old tree is still the old, complete one; a new run rebuilds
        tree = build.build(self.base)
        self.assertEqual('# new\n',
                         (tree / 'nova/tests/test_fake.py').read_text())

    def test_stale_partial_of_dead_process_is_removed(self):
        stale = self.project.root / 'build' / '.fake.partial-999999999'
        stale.mkdir(parents=True)
        build.build(self.base)
        self.assertFalse(stale.exists())

    def test_hash_mismatch(self):
        self.project.sdist.write_bytes(b'not the release')
        exc = self.assertRaises(errors.HashMismatch, build.build, self.base)
        self.assertIn('sha256 mismatch for nova-1.0.0.tar.gz', str(exc))
        self.assertFalse(self.project.sdist.exists())
        self.assertFalse((self.project.root / 'build' / 'fake').exists())

    def test_patch_does_not_apply_names_file_and_hunk(self):
        patch = self.base.patches / '0002-Fix-manager.patch'
        patch.write_text(patch.read_text().replace(
            '         for dev in self.pci_devs:',
            '         for dev in self.all_devs:'))
        exc = self.assertRaises(errors.PatchError, build.build, self.base)
        self.assertIn('0002-Fix-manager.patch does not apply to nova 1.0.0',
                      str(exc))
        self.assertIn('nova/pci/manager.py, hunk 1 of 1 (@@ -1,4 +1,4 @@',
                      str(exc))
        self.assertFalse((self.project.root / 'build' / 'fake').exists())


class AlreadyFixedTest(testtools.TestCase):

    def test_a_release_with_every_unit_has_nothing_to_build(self):
        project = self.useFixture(fakes.FakeProject(
            claims=fakes.FIXED_CLAIMS, manager=fakes.FIXED_MANAGER))
        base = config.get_base(project.root, 'fake')
        exc = self.assertRaises(errors.AlreadyFixed, build.build, base)
        self.assertEqual(
            'nova 1.0.0 already has every unit of the fix that series fake '
            'carries (claim-abort, free-instance); nothing to apply '
            '("nova-fork check 1.0.0" says which it has)', str(exc))
        self.assertFalse(pathlib.Path(project.root / 'build/fake').exists())
        # its pristine tree (the tests only) can still be had
        self.assertEqual('fake-pristine',
                         build.build(base, pristine=True).name)
