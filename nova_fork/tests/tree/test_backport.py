import pathlib
import shutil

import testtools

from nova_fork import config
from nova_fork.dist import export
from nova_fork import errors
from nova_fork.tests import fakes
from nova_fork.tree import backport
from nova_fork.tree import build
from nova_fork.tree import gitutils
from nova_fork.tree import refresh


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
        self.project.append(fakes.line_section(
            'old', '1.0.0', self.project.sha256, 'patches/old',
            'backport_of = fake\n'))

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

    def test_backport_writes_the_line_from_the_line_above(self):
        root = self.project.root
        old = root / 'patches' / 'old'
        shutil.rmtree(old)
        base = config.get_base(root, 'old')
        backport.backport(base)
        # each commit names the one of line fake it was cherry-picked from
        names = sorted(p.name for p in old.iterdir() if p.name != 'series')
        for name, sha in zip(names, self.shas):
            self.assertIn('(cherry picked from commit %s)' % sha,
                          (old / name).read_text(), name)
        self.assertIn('# Backports of line fake to nova 1.0.0',
                      (old / 'series').read_text())
        # which export checks, and the same backport again changes nothing
        export.export(base)
        self.assertEqual([], backport.backport(base))

    def test_a_backport_that_changes_a_new_file_gets_a_variant(self):
        root = self.project.root
        base = config.get_base(root, 'old')
        tree = build.build(base)
        refresh.refresh(base)
        (tree / 'nova/tests/test_fake.py').write_text('# the old API\n')
        fakes.git(tree, 'commit', '-q', '-a', '--amend', '--no-edit')
        changed = refresh.refresh(base)
        variant = pathlib.Path('patches/old/files/nova/tests/test_fake.py')
        self.assertEqual([variant], changed)
        self.assertEqual('# the old API\n', (root / variant).read_text())
        # the project's own file stays the newest line's
        self.assertEqual('# a regression test\n',
                         (root / 'nova/tests/test_fake.py').read_text())

    def test_a_backport_keeps_the_line_s_own_variant(self):
        root = self.project.root
        variant = root / 'patches/old/files/nova/tests/test_fake.py'
        variant.parent.mkdir(parents=True)
        variant.write_text('# the old API\n')
        base = config.get_base(root, 'old')
        # the cherry-pick brings line fake's file; the line keeps its own
        self.assertNotIn(pathlib.Path('patches/old/files/nova/tests/'
                                      'test_fake.py'),
                         backport.backport(base))
        tree = build.build_dir(root) / build.tree_name(base.label)
        self.assertEqual('# the old API\n',
                         (tree / 'nova/tests/test_fake.py').read_text())
        self.assertEqual('# the old API\n', variant.read_text())
        export.export(base)

    def test_backport_of_a_line_that_backports_none(self):
        base = config.get_base(self.project.root, 'fake')
        exc = self.assertRaises(errors.UsageError, backport.backport, base)
        self.assertEqual('line fake backports no other line: give it '
                         'backport_of in bases.ini', str(exc))
