import pathlib

import fixtures
import testtools

from nova_fork import errors
from nova_fork import generated
from nova_fork.tests import fakes

INC = generated.FOLDER / 'x.inc'


class GeneratedTest(testtools.TestCase):

    def checkout(self):
        """A git checkout with bases.ini and a fragment, committed."""
        root = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        inc = root / INC
        inc.parent.mkdir(parents=True)
        inc.write_text('old\n')
        (root / 'bases.ini').write_text('[bug]\n')
        fakes.git(root, 'init', '-q')
        fakes.git(root, 'add', '-A')
        fakes.git(root, 'commit', '-qm', 'one')
        return root, fakes.git(root, 'rev-parse', '--short=12',
                               'HEAD').strip()

    def test_write(self):
        root = self.useFixture(fixtures.TempDir()).path
        path = generated.write(root, 'text\n', INC)
        self.assertEqual(pathlib.Path(root) / INC, path)
        self.assertEqual('text\n', path.read_text())
        self.assertEqual([INC.name], [p.name for p in path.parent.iterdir()])
        generated.write(root, 'other\n', INC)
        self.assertEqual('other\n', path.read_text())

    def test_commit_of(self):
        root = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        self.assertEqual('unknown (not a git checkout)',
                         generated.commit_of(root))
        self.assertIsNone(generated.dirty_files(root))
        root, head = self.checkout()
        self.assertEqual(head, generated.commit_of(root))
        # untracked files and the generated fragments are not changes
        (root / 'build').mkdir()
        (root / 'build' / 'x').write_text('x\n')
        (root / INC).write_text('new\n')
        self.assertEqual(head, generated.commit_of(root))
        self.assertEqual([], generated.dirty_files(root))
        (root / 'bases.ini').write_text('[bug]\nid = 1\n')
        self.assertEqual(head + '-dirty', generated.commit_of(root))
        self.assertEqual(['bases.ini'], generated.dirty_files(root))

    def test_refuse_dirty(self):
        root, head = self.checkout()
        (root / INC).write_text('new\n')
        self.assertEqual(head, generated.refuse_dirty(root, INC))
        for n in range(5):
            (root / ('f%d' % n)).write_text('x\n')
        fakes.git(root, 'add', 'f0', 'f1', 'f2', 'f3', 'f4')
        (root / 'bases.ini').write_text('[bug]\nid = 1\n')
        exc = self.assertRaises(errors.DirtyCheckout, generated.refuse_dirty,
                                root, INC, ', then x')
        self.assertEqual(2, exc.exit_code)
        self.assertEqual(
            'not writing doc/source/generated/x.inc: the checkout has '
            'uncommitted changes (bases.ini, f0, f1 and 3 more), and a table '
            'of the docs names the commit it was made at; commit them '
            'first, then x',
            str(exc))
