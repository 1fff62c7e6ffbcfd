import io
import os
import pathlib
from unittest import mock

import fixtures
import testtools

from nova_fork import cmd
from nova_fork import config
from nova_fork.dist import review
from nova_fork.proof import commitgate
from nova_fork.tests import fakes
from nova_fork.tree import build
from nova_fork.tree import gitutils

CHANGE_IDS = {'0001-Fix-claims.patch': 'I' + '1' * 40,
              '0002-Fix-manager.patch': 'I' + '2' * 40,
              '0003-Add-tests.msg': 'I' + '3' * 40}

# as master's: the reproducer first, then the fixes; the last fix is not
# for review
SERIES = ('0003-Add-tests.msg nova/tests/test_fake.py review\n'
          '0001-Fix-claims.patch unit=claim-abort review\n'
          '0002-Fix-manager.patch unit=free-instance '
          'releasenotes/notes/fake.yaml\n')


class ReviewTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        self.root = self.project.root
        patches = self.root / 'patches' / 'fake'
        for name, change_id in CHANGE_IDS.items():
            path = patches / name
            text = path.read_text()
            trailers = 'Related-Bug: #1860555\nChange-Id: %s' % change_id
            if name.endswith('.msg'):
                text += '\n' + trailers + '\n'
            else:
                text = text.replace('Closes-Bug: #1860555', trailers)
            path.write_text(text)
        (patches / 'series').write_text(SERIES)
        # the user: a global git config of theirs, and a cwd that is no
        # git repository
        home = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        self.gitconfig = home / '.gitconfig'
        self.gitconfig.write_text(
            '[user]\n\tname = Ann Reviewer\n\temail = ann@example.org\n'
            '[nova-fork]\n\tnick = ann\n')
        self.useFixture(fixtures.EnvironmentVariable('HOME', str(home)))
        self.useFixture(fixtures.EnvironmentVariable(
            'GIT_CONFIG_GLOBAL', str(self.gitconfig)))
        self.useFixture(fixtures.EnvironmentVariable(
            'GIT_CONFIG_NOSYSTEM', '1'))
        for name in ('NAME', 'EMAIL'):
            for who in ('AUTHOR', 'COMMITTER'):
                self.useFixture(fixtures.EnvironmentVariable(
                    'GIT_%s_%s' % (who, name)))
        self.useFixture(fixtures.EnvironmentVariable('EMAIL'))
        self.addCleanup(os.chdir, os.getcwd())
        os.chdir(home)
        self.dest = review.review_dir(self.root, 'fake')

    def run_review(self, *args, gate=False):
        # the fake lines have no venv to gate the commits with: the tests
        # of the gate give it its results
        args = list(args) + ([] if gate else ['--no-gate'])
        with mock.patch('sys.stdout', new_callable=io.StringIO) as out, \
                mock.patch('sys.stderr', new_callable=io.StringIO) as err:
            code = cmd.main(['-q', 'review', 'fake'] + args)
        return code, out.getvalue(), err.getvalue()

    def patch_texts(self):
        return [p.read_text() for p in sorted(self.dest.glob('*.patch'))]

    def trailers(self, text):
        message = text.split('\n\n', 1)[1].split('\n---\n', 1)[0]
        return message.rstrip('\n').rsplit('\n\n', 1)[-1].splitlines()

    def test_writes_the_marked_commits_as_the_user(self):
        code, out, err = self.run_review()
        self.assertEqual((0, ''), (code, err))
        self.assertEqual(self.root / 'dist' / 'review' / 'fake', self.dest)
        self.assertEqual(['0001-Add-regression-tests.patch',
                          '0002-Fix-claims.patch'],
                         sorted(p.name for p in self.dest.iterdir()))
        tests, claims = self.patch_texts()
        self.assertIn('\nFrom: Ann Reviewer <ann@example.org>\n', claims)
        self.assertIn('\nSubject: [PATCH 2/2] Fix claims\n', claims)
        # the series' own dates: the patch's, and the build's for a message
        self.assertIn('\nDate: Wed, 1 Jan 2020 00:00:00 +0000\n', claims)
        self.assertIn('\nDate: Wed, 2 Dec 2026 12:00:00 +0000\n', tests)
        self.assertEqual(['Related-Bug: #1860555',
                          'Signed-off-by: Ann Reviewer <ann@example.org>',
                          'Change-Id: ' + CHANGE_IDS['0001-Fix-claims.patch']],
                         self.trailers(claims))
        self.assertIn('nova/tests/test_fake.py', tests)
        self.assertIn('applies onto nova 1.0.0 (the pristine release)', out)
        self.assertIn('Related-Bug: #1860555: file the path of the change as '
                      'its own bug (the report is '
                      'doc/source/bug-report-move.rst), then run again with '
                      '--bug N', out)
        self.assertEqual(str(self.dest), out.splitlines()[-1])
        self.assertEqual([], list(self.dest.parent.glob('.*')))

    def test_bug_closes_with_the_fixes_relates_with_the_rest(self):
        code, out, err = self.run_review('--bug', '2000001')
        self.assertEqual((0, ''), (code, err))
        tests, claims = self.patch_texts()
        self.assertEqual(['Related-Bug: #1860555', 'Related-Bug: #2000001',
                          'Signed-off-by: Ann Reviewer <ann@example.org>',
                          'Change-Id: ' + CHANGE_IDS['0003-Add-tests.msg']],
                         self.trailers(tests))
        self.assertEqual(['Related-Bug: #1860555', 'Closes-Bug: #2000001',
                          'Signed-off-by: Ann Reviewer <ann@example.org>',
                          'Change-Id: ' + CHANGE_IDS['0001-Fix-claims.patch']],
                         self.trailers(claims))
        self.assertNotIn('run again with --bug', out)

    def test_bug_partial_then_closes_names_the_note(self):
        series = self.root / 'patches' / 'fake' / 'series'
        series.write_text(series.read_text().replace(
            'unit=free-instance', 'unit=free-instance review'))
        code, out, err = self.run_review('--bug', '2000001')
        self.assertEqual((0, ''), (code, err))
        tests, claims, manager = self.patch_texts()
        self.assertIn('Partial-Bug: #2000001', self.trailers(claims))
        self.assertIn('Closes-Bug: #2000001', self.trailers(manager))
        note = 'releasenotes/notes/bug-2000001-fake.yaml'
        self.assertIn('+++ b/%s\n' % note, manager)
        self.assertIn('https://bugs.launchpad.net/nova/+bug/2000001', manager)
        self.assertIn('named after bug 2000001: %s' % note, out)

    def test_a_commit_failing_the_gate_writes_nothing(self):
        cells = {check: commitgate.Cell(True, 'ok')
                 for check in commitgate.CHECKS}
        failing = dict(cells, unit=commitgate.Cell(False, '1 of 2 failed'))
        with mock.patch.object(commitgate, 'gate', return_value=[
                ('Add regression tests', cells), ('Fix claims', failing)]):
            code, out, err = self.run_review(gate=True)
        self.assertEqual(7, code)
        self.assertIn('FAIL: 1 of 2 failed', out)
        self.assertIn('commit 2 unit failed; nothing written', err)
        self.assertFalse(self.dest.exists())

    def test_the_bug_id_comes_from_bases_ini(self):
        bases = self.root / 'bases.ini'
        bases.write_text(bases.read_text().replace('id = 1860555',
                                                   'id = 1999'))
        code, out, _ = self.run_review()
        self.assertEqual(0, code)
        self.assertIn('Related-Bug: #1999\n', self.patch_texts()[1])
        self.assertIn('say only Related-Bug: #1999:', out)

    def test_the_env_identity_counts_as_for_git(self):
        self.useFixture(fixtures.EnvironmentVariable('GIT_AUTHOR_NAME',
                                                     'Bo Env'))
        self.useFixture(fixtures.EnvironmentVariable('GIT_AUTHOR_EMAIL',
                                                     'bo@example.org'))
        self.assertEqual(0, self.run_review()[0])
        self.assertIn('Signed-off-by: Bo Env <bo@example.org>\n',
                      self.patch_texts()[0])

    def assert_fails(self, code, text, args=()):
        got, out, err = self.run_review(*args)
        self.assertEqual(code, got, err)
        self.assertEqual(1, len(err.splitlines()), err)
        self.assertIn(text, err)
        return out

    def test_no_identity_writes_nothing(self):
        self.gitconfig.write_text('[user]\n\tname = Ann Reviewer\n')
        self.assert_fails(2, 'no git identity to sign the review series '
                             'with')
        self.assert_fails(2, 'git config --global user.email')
        self.assertFalse((self.root / 'dist').exists())
        self.assertFalse((self.root / 'build').exists())

    def own_test(self):
        # the fork's commits own their comments by the local part of
        # their e-mail
        test = self.root / 'nova' / 'tests' / 'test_fake.py'
        test.write_text('# FIXME(nova-pci-fork): a regression test\n'
                        '# NOTE(nova-pci-fork): and a note\n')

    def test_the_comments_name_the_uploader(self):
        self.own_test()
        code, out, err = self.run_review()
        self.assertEqual((0, ''), (code, err))
        self.assertIn('+# FIXME(ann): a regression test\n'
                      '+# NOTE(ann): and a note\n', self.patch_texts()[0])
        self.assertIn('the owner of its FIXME and NOTE comments: ann', out)
        self.assertEqual(0, self.run_review('--nick', 'bo_r')[0])
        self.assertIn('+# FIXME(bo_r): a regression test\n',
                      self.patch_texts()[0])
        # git-review's user name where the fork's own key is not set
        self.gitconfig.write_text(
            '[user]\n\tname = Ann Reviewer\n\temail = ann@example.org\n'
            '[gitreview]\n\tusername = annr\n')
        self.assertEqual(0, self.run_review()[0])
        self.assertIn('+# NOTE(annr): and a note\n', self.patch_texts()[0])

    def test_no_nick_writes_nothing(self):
        self.gitconfig.write_text(
            '[user]\n\tname = Ann Reviewer\n\temail = ann@example.org\n')
        self.assert_fails(2, 'give --nick NICK, or set it once with git '
                             'config --global nova-fork.nick NICK')
        self.assert_fails(2, "--nick 'a b' is not an IRC nick",
                          ['--nick', 'a b'])
        self.assertFalse((self.root / 'dist').exists())

    def test_bug_is_a_positive_number(self):
        for bug in ('0', 'abc', '-3', '#12'):
            self.assert_fails(2, 'a positive integer, not %r' % bug,
                              ['--bug=%s' % bug])
        self.assert_fails(2, 'file the path of the change as its own bug',
                          ['--bug', '1860555'])
        self.assertFalse((self.root / 'dist').exists())

    def test_a_long_subject_keeps_the_old_output(self):
        self.assertEqual(0, self.run_review()[0])
        old = self.patch_texts()
        msg = self.root / 'patches' / 'fake' / '0003-Add-tests.msg'
        msg.write_text('Add regression tests' + 'x' * 31 + msg.read_text()[
            len('Add regression tests'):])
        self.assert_fails(5, 'entry 1 (0003-Add-tests.msg): its subject is '
                             "51 characters, more than nova's 50")
        self.assertEqual(old, self.patch_texts())

    def test_a_second_change(self):
        series = self.root / 'patches' / 'fake' / 'series'
        series.write_text(series.read_text().replace(
            'unit=free-instance', 'unit=free-instance review=lm'))
        code, out, err = self.run_review('--change', 'lm')
        self.assertEqual((0, ''), (code, err))
        dest = review.review_dir(self.root, 'fake', 'lm')
        self.assertEqual(self.root / 'dist' / 'review' / 'fake-lm', dest)
        self.assertEqual(['0001-Fix-manager.patch'],
                         sorted(p.name for p in dest.iterdir()))
        self.assertIn('1 commit(s) marked review=lm', out)
        self.assertIn('the report is doc/source/bug-report-lm.rst', out)
        # the first change is the entries that say review, as before
        self.assertEqual(0, self.run_review()[0])
        self.assertEqual(2, len(self.patch_texts()))
        self.assert_fails(2, 'marks no entry review=nosuch: add the word '
                             'review=nosuch to the entries that go to '
                             'Gerrit (its changes: lm, move)',
                          ['--change', 'nosuch'])

    def test_no_entry_marked(self):
        series = self.root / 'patches' / 'fake' / 'series'
        series.write_text(series.read_text().replace(' review', ''))
        self.assert_fails(2, 'marks no entry review: add the word review')

    def test_review_entries_must_apply_on_their_own(self):
        # the second fix's entry, with a change that needs the first
        series = self.root / 'patches' / 'fake' / 'series'
        series.write_text(
            '0001-Fix-claims.patch unit=claim-abort\n'
            '0004-Again.patch unit=free-instance review\n'
            '0003-Add-tests.msg nova/tests/test_fake.py\n')
        work = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        (series.parent / '0004-Again.patch').write_text(fakes.make_patch(
            work / 'p', 'nova/compute/claims.py', fakes.FIXED_CLAIMS,
            fakes.FIXED_CLAIMS + '# again\n', 'Again').replace(
                'Closes-Bug', 'Change-Id: I%s\nRelated-Bug' % ('4' * 40)))
        self.assert_fails(5, 'entry 2 (0004-Again.patch) does not apply '
                             'without the entries before it')
        self.assertFalse(self.dest.exists())

    def bare_clone(self):
        """A nova mirror: a bare clone of the pristine release."""
        base = config.get_base(self.root, 'fake')
        pristine = build.build(base, pristine=True)
        mirror = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        mirror = mirror / 'nova.git'
        gitutils.git(pristine, 'clone', '-q', '--bare', str(pristine),
                     str(mirror))
        return mirror

    def test_onto_a_ref_of_a_mirror(self):
        mirror = self.bare_clone()
        sha = gitutils.out(mirror, 'rev-parse', '1.0.0^{commit}')
        code, out, err = self.run_review('--onto', '%s@1.0.0' % mirror)
        self.assertEqual((0, ''), (code, err))
        self.assertIn('applies onto 1.0.0 (%s) of %s' % (sha[:12], mirror),
                      out)
        # the temporary worktree is gone, and git knows it
        self.assertFalse((mirror / 'worktrees').exists())
        self.assertEqual(1, len(gitutils.out(mirror, 'worktree',
                                             'list').splitlines()))

    def test_not_onto_a_ref_that_has_the_tests(self):
        # the mirror's HEAD has the reproducer's files already
        mirror = self.bare_clone()
        self.assert_fails(5, 'does not git am onto master (',
                          ['--onto', str(mirror)])
        self.assertFalse(self.dest.exists())
        self.assertFalse((mirror / 'worktrees').exists())

    def test_onto_what_is_not_there(self):
        self.assert_fails(2, 'is not a git directory',
                          ['--onto', '/no/such/nova@master'])
        mirror = self.bare_clone()
        self.assert_fails(2, "has no commit 'nosuch'",
                          ['--onto', '%s@nosuch' % mirror])

    def test_series_word_review_is_no_file(self):
        commits = config.get_base(self.root, 'fake').commits()
        self.assertEqual([(('nova/tests/test_fake.py',), 'move'),
                          ((), 'move'),
                          (('releasenotes/notes/fake.yaml',), '')],
                         [(c.files, c.review) for c in commits])
