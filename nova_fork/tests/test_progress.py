"""A line on stderr for each step of a long command, unless --quiet."""

import io
import re
import subprocess
from unittest import mock

import fixtures
import testtools

from nova_fork import cmd
from nova_fork import config
from nova_fork.env import runner
from nova_fork import progress
from nova_fork.proof import prove
from nova_fork.tests import fakes

STEP_RE = re.compile(r'^\[ *\d+\.\ds\] ')


def steps(err):
    """The step lines on stderr, without their times."""
    return [STEP_RE.sub('', line) for line in err.splitlines()
            if STEP_RE.match(line)]


class SayTest(testtools.TestCase):

    def say(self, on, *texts, **kwargs):
        with mock.patch('sys.stderr', new_callable=io.StringIO) as err, \
                progress.shown(on):
            for text in texts:
                progress.say(text, **kwargs)
        return err.getvalue()

    def test_shown(self):
        self.assertEqual('[   1.5s] build: build/x, reused\n',
                         self.say(True, 'build: build/x, reused',
                                  seconds=1.5))

    def test_quiet(self):
        self.assertEqual('', self.say(False, 'build: build/x, reused'))

    def test_nothing_outside_nova_fork(self):
        # the tool's functions called from tests or tools print nothing
        with mock.patch('sys.stderr', new_callable=io.StringIO) as err:
            progress.say('fetch: nova 1.0.0, cached')
            progress.Step().done('build: build/x, made')
        self.assertEqual('', err.getvalue())

    def test_once(self):
        err = self.say(True, 'venv: v, reused', 'venv: v, reused',
                       once=True)
        self.assertEqual(['venv: v, reused'], steps(err))
        # again in the next command
        self.assertEqual(err, self.say(True, 'venv: v, reused', once=True))

    def test_state_is_restored(self):
        with progress.shown(True):
            with progress.shown(False):
                self.assertFalse(progress._state['on'])
            self.assertTrue(progress._state['on'])
        self.assertFalse(progress._state['on'])

    def test_step_times(self):
        with mock.patch.object(progress.time, 'monotonic',
                               side_effect=[10.0, 22.34]), \
                mock.patch('sys.stderr', new_callable=io.StringIO) as err, \
                progress.shown():
            progress.Step().done('stestr: build/x, 21 tests: 9 failed')
        self.assertEqual('[  12.3s] stestr: build/x, 21 tests: 9 failed\n',
                         err.getvalue())


class MainTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())

    def main(self, *args):
        with mock.patch('sys.stdout', new_callable=io.StringIO) as out, \
                mock.patch('sys.stderr', new_callable=io.StringIO) as err:
            code = cmd.main(list(args))
        return code, out.getvalue(), err.getvalue()

    def test_steps_on_stderr_the_path_on_stdout(self):
        code, out, err = self.main('build', 'fake', '--pristine')
        tree = self.project.root / 'build' / 'fake-pristine'
        self.assertEqual((0, '%s\n' % tree), (code, out))
        # the release is imported once, its trees are clones of that
        self.assertEqual(['fetch: nova 1.0.0, cached in .cache/sdists',
                          'build: build/imports/1.0.0, made: the import of '
                          'nova 1.0.0',
                          'build: build/fake-pristine, made: nova 1.0.0 '
                          'and 3 commits'], steps(err))
        self.assertEqual(len(err.splitlines()), len(steps(err)))
        code, out, err = self.main('build', 'fake', '--pristine')
        self.assertEqual((0, '%s\n' % tree), (code, out))
        self.assertEqual(['fetch: nova 1.0.0, cached in .cache/sdists',
                          'build: build/fake-pristine, reused'], steps(err))

    def test_quiet_before_or_after_the_command(self):
        for args in (['--quiet', 'build', 'fake'], ['-q', 'build', 'fake'],
                     ['build', 'fake', '--quiet'],
                     ['build', '-q', 'fake', '--pristine']):
            code, out, err = self.main(*args)
            self.assertEqual((0, ''), (code, err), args)
            self.assertTrue(out.startswith(str(self.project.root)), args)

    def test_the_error_stays_one_line_after_the_steps(self):
        code, out, err = self.main('build', 'fake', '--without', 'nosuch')
        self.assertEqual(2, code)
        lines = err.splitlines()
        self.assertEqual(len(lines) - 1, len(steps(err)))
        self.assertTrue(lines[-1].startswith('nova-fork: error: '), err)


class StestrTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        self.base = config.get_base(self.project.root, 'fake')
        self.tree = self.project.root / 'build' / 'fake'
        self.useFixture(fixtures.MockPatchObject(prove.venv, 'ensure'))
        self.err = self.useFixture(fixtures.MockPatch(
            'sys.stderr', new_callable=io.StringIO)).mock
        self.useFixture(fixtures.MonkeyPatch(
            'nova_fork.progress._state', {'on': True, 'said': set()}))

    def test_a_run_counts_the_records_of_its_stream(self):
        records = [{'id': 'm.T.test_%d' % i, 'status': status}
                   for i, status in enumerate(['success'] * 12 +
                                              ['fail'] * 9)]
        with mock.patch.object(prove.runner, 'stestr'), \
                mock.patch.object(prove, '_summary', return_value=records):
            got = prove.run_module(self.base, self.tree)
        self.assertEqual(21, len(got))
        self.assertEqual(['stestr: build/fake, 21 tests: 9 failed'],
                         steps(self.err.getvalue()))

    def test_a_run_of_the_test_command_says_how_it_ended(self):
        done = subprocess.CompletedProcess([], 1)
        with mock.patch.object(runner, 'stestr', return_value=done):
            self.assertEqual(1, runner.run(self.base, self.tree))
            self.assertEqual(1, runner.run(self.base, self.tree, ['last']))
        self.assertEqual(['stestr: build/fake, functional tests: exit 1'],
                         steps(self.err.getvalue()))
