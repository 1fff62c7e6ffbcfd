import pathlib
import shutil

import testtools

from nova_fork import config
from nova_fork import errors
from nova_fork.tests import fakes
from nova_fork.tree import build
from nova_fork.tree import gitutils
from nova_fork.tree import refresh


class RefreshTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        self.base = config.get_base(self.project.root, 'fake')
        self.tree = build.build(self.base)

    def git(self, *args):
        return gitutils.git(self.tree, *args)

    def patches(self):
        return {p.name: p.read_text() for p in self.base.patches.iterdir()}

    def test_right_after_a_build_nothing_changes(self):
        # the fake's patches were not written by the tool: the first
        # refresh writes them as format-patch does, and then they stay
        self.assertEqual(
            [pathlib.Path('patches/fake/0001-Fix-claims.patch'),
             pathlib.Path('patches/fake/0002-Fix-manager.patch')],
            refresh.refresh(self.base))
        head = gitutils.out(self.tree, 'rev-parse', 'HEAD')
        self.assertEqual(head, gitutils.out(build.build(self.base),
                                            'rev-parse', 'HEAD'))
        self.assertEqual([], refresh.refresh(self.base))

    def edit_second_commit(self):
        commits = gitutils.out(self.tree, 'rev-list', '--reverse',
                               '1.0.0..HEAD').split()
        self.git('checkout', '-q', '--detach', commits[1])
        manager = self.tree / 'nova/pci/manager.py'
        manager.write_text(manager.read_text().replace('dev,', 'device,'))
        with (self.tree / 'releasenotes/notes/fake.yaml').open('a') as f:
            f.write('# more\n')
        self.git('commit', '-qa', '--amend', '--no-edit')
        self.git('cherry-pick', commits[2])

    def test_edited_commits_go_back_where_they_came_from(self):
        refresh.refresh(self.base)
        self.edit_second_commit()
        changed = refresh.refresh(self.base)
        self.assertEqual([pathlib.Path('patches/fake/0002-Fix-manager.patch'),
                          pathlib.Path('releasenotes/notes/fake.yaml')],
                         changed)
        patch = (self.base.patches / '0002-Fix-manager.patch').read_text()
        self.assertIn('+            self._free_device(device, instance)',
                      patch)
        # the release note stays a plain file, out of the patch
        self.assertNotIn('fake.yaml', patch)
        # and a new build from them is the edited tree
        head = gitutils.out(self.tree, 'rev-parse', 'HEAD^{tree}')
        shutil.rmtree(self.tree)
        self.assertEqual(head, gitutils.out(build.build(self.base),
                                            'rev-parse', 'HEAD^{tree}'))

    def test_a_split_commit_needs_its_series_entry(self):
        self.git('commit', '-q', '--allow-empty', '-m', 'Another')
        before = self.patches()
        exc = self.assertRaises(errors.UsageError, refresh.refresh,
                                self.base)
        self.assertIn('has 4 commits after 1.0.0, and %s lists 3' % (
            self.base.patches / 'series'), str(exc))
        self.assertEqual(before, self.patches())

    def test_a_message_entry_must_not_change_upstream_files(self):
        (self.tree / 'nova/compute/claims.py').write_text('# changed\n')
        self.git('commit', '-qa', '--amend', '--no-edit')
        before = self.patches()
        exc = self.assertRaises(errors.UsageError, refresh.refresh,
                                self.base)
        self.assertEqual(before, self.patches())
        self.assertIn('changes nova/compute/claims.py, which entry '
                      '0003-Add-tests.msg does not list', str(exc))
