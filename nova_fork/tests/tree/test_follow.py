import testtools

from nova_fork import config
from nova_fork.dist import export
from nova_fork import errors
from nova_fork.tests import fakes
from nova_fork.tree import backport
from nova_fork.tree import build
from nova_fork.tree import follow
from nova_fork.tree import gitutils
from nova_fork.tree import refresh

OWN = ('On old: the release keeps its own comment.')


def edit_commit(base, subject, edit, message=None):
    """Change the commit of the line's fork with subject; refresh it."""
    tree = build.build(base)
    commit = gitutils.out(tree, 'log', '--format=%H', '--grep',
                          '^%s' % subject, '-1')
    gitutils.git(tree, 'checkout', '-q', '-b', 'edit', commit)
    edit(tree)
    gitutils.git(tree, 'add', '-A')
    args = ['-F', '-'] if message else ['--no-edit']
    gitutils.git(tree, 'commit', '-q', '--amend', *args,
                 input=message(gitutils.out(
                     tree, 'show', '-s', '--format=%B', 'HEAD'))
                 if message else None)
    gitutils.git(tree, 'rebase', '-q', '--onto', 'edit', commit, 'master')
    refresh.refresh(base)


def replace_in(path, old, new):
    def edit(tree):
        text = (tree / path).read_text()
        assert old in text, (path, old)
        (tree / path).write_text(text.replace(old, new))
    return edit


class FollowTest(testtools.TestCase):
    """Line old backports line fake, on the same fake release."""

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        self.root = self.project.root
        self.project.append(fakes.line_section(
            'old', '1.0.0', self.project.sha256, 'patches/old',
            'backport_of = fake\n'))
        self.fake = config.get_base(self.root, 'fake')
        self.old = config.get_base(self.root, 'old')
        backport.backport(self.old)
        # what old's backport changed to fit its release: a comment of its
        # own in the fix, and a paragraph saying so
        edit_commit(
            self.old, 'Fix claims',
            replace_in('nova/compute/claims.py', '    def abort',
                       '    # old\n    def abort'),
            lambda m: m.replace('\nCloses-Bug', '\n%s\n\nCloses-Bug' % OWN))
        self.commit_project()

    def commit_project(self):
        gitutils.git(self.root, 'init', '-q')
        gitutils.git(self.root, 'add', '-A', 'bases.ini', 'patches', 'nova',
                     'releasenotes')
        gitutils.git(self.root, 'commit', '-q', '-m', 'the project')

    def patch(self, line, name):
        return (self.root / 'patches' / line / name).read_text()

    def test_the_edit_goes_down_and_the_backport_stays(self):
        edit_commit(
            self.fake, 'Fix claims',
            replace_in('nova/compute/claims.py', 'self._ref = instance',
                       'self._ref = instance  # the claimed one'),
            lambda m: m.replace('\n\n', '\n\nWhy it is so.\n\n', 1))
        notes, paths = follow.follow(self.old)
        self.assertEqual(['followed: Fix claims'], notes)
        text = self.patch('old', '0001-Fix-claims.patch')
        # the edit of the line above, in the code and the message
        self.assertIn('self._ref = instance  # the claimed one', text)
        self.assertIn('\nWhy it is so.\n', text)
        # what the backport had changed, kept
        self.assertIn('+    # old\n', text)
        self.assertIn('\n%s\n' % OWN, text)
        # and it names the new commit of the line above
        tree = build.build(self.fake)
        first = gitutils.out(tree, 'rev-list', '--reverse',
                             '1.0.0..HEAD').split()[0]
        self.assertIn('(cherry picked from commit %s)' % first, text)
        self.assertIn(pathlib_name('old', '0001-Fix-claims.patch'),
                      [str(p) for p in paths])
        export.export(self.old)

    def test_a_commit_the_line_above_gained_is_picked(self):
        fake = self.root / 'patches' / 'fake'
        # numbered as the line above numbers it (after commits old lacks)
        (fake / '0009-More-tests.msg').write_text(
            'Add more tests\n\nChange-Id: I%s\n' % ('4' * 40))
        (self.root / 'nova' / 'tests' / 'test_more.py').write_text('# more\n')
        series = fake / 'series'
        series.write_text(series.read_text() +
                          '0009-More-tests.msg nova/tests/test_more.py\n')
        notes, _ = follow.follow(self.old)
        self.assertEqual(['picked: Add more tests'], notes)
        # numbered after old's own entries
        self.assertIn('0004-More-tests.msg nova/tests/test_more.py',
                      self.patch('old', 'series'))
        self.assertIn('(cherry picked from commit',
                      self.patch('old', '0004-More-tests.msg'))
        export.export(self.old)

    def test_nothing_changed_above(self):
        notes, paths = follow.follow(self.old)
        self.assertEqual(([], []), (notes, paths))

    def test_an_unknown_revision(self):
        exc = self.assertRaises(errors.UsageError, follow.follow, self.old,
                                'no-such-rev')
        self.assertIn('--since no-such-rev: the project has no such '
                      'revision', str(exc))

    def test_a_line_that_backports_none(self):
        exc = self.assertRaises(errors.UsageError, follow.follow, self.fake)
        self.assertIn('line fake backports no other line', str(exc))


def pathlib_name(line, name):
    return 'patches/%s/%s' % (line, name)
