"""The wiring of the commands: one module each, all in the table."""

import io
import pathlib
from unittest import mock

import testtools

from nova_fork import cmd
from nova_fork import commands
from nova_fork.commands import releases
from nova_fork import config
from nova_fork import facts
from nova_fork.tests import fakes
from nova_fork import toxenvs
from nova_fork.tree import index


class CommandsTest(testtools.TestCase):

    def test_every_command_module_is_wired(self):
        folder = pathlib.Path(commands.__file__).parent
        modules = {path.stem for path in folder.glob('*.py')} - {
            '__init__', 'options'}
        self.assertEqual(modules, {cmd.name_of(c) for c in cmd.COMMANDS})
        for command in cmd.COMMANDS:
            name = cmd.name_of(command)
            self.assertTrue(command.HELP, name)
            self.assertTrue(callable(command.add_arguments), name)
            self.assertTrue(callable(getattr(command, '%s_cmd' % name)),
                            name)

    def test_each_command_runs_its_function(self):
        parser = cmd.make_parser()
        args = parser.parse_args(['check', '29.4.0'])
        self.assertIs(cmd.check.check_cmd, args.func)
        args = parser.parse_args(['test', 'master', '--regression'])
        self.assertIs(cmd.test.test_cmd, args.func)
        self.assertEqual([], args.stestr_args)
        self.assertFalse(hasattr(parser.parse_args(['lines']),
                                 'stestr_args'))


class MainTest(testtools.TestCase):

    def test_error_is_one_line_and_exit_code(self):
        self.useFixture(fakes.FakeProject())
        with mock.patch('sys.stderr', new_callable=io.StringIO) as err:
            code = cmd.main(['build', 'queens'])
        self.assertEqual(2, code)
        self.assertEqual(1, len(err.getvalue().splitlines()))
        self.assertIn("nova-fork: error: unknown series 'queens'",
                      err.getvalue())

    def test_build_prints_the_path(self):
        project = self.useFixture(fakes.FakeProject())
        with mock.patch('sys.stdout', new_callable=io.StringIO) as out:
            self.assertEqual(0, cmd.main(['-q', 'build', 'fake',
                                          '--pristine']))
        self.assertEqual(str(project.root / 'build' / 'fake-pristine'),
                         out.getvalue().strip())


class LinesTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        self.project.append(
            'releases = 0.9.0 %s\n' % ('cd' * 32) + fakes.line_section(
                'two', '2.0.0', 'ab' * 32, 'patches/fake',
                'runtime = path debian:bullseye\n'))

    def main(self, *args):
        with mock.patch('sys.stdout', new_callable=io.StringIO) as out, \
                mock.patch('sys.stderr', new_callable=io.StringIO) as err:
            code = cmd.main(list(args))
        return code, out.getvalue() + err.getvalue()

    def test_tox_envs_for_every_line(self):
        envs = toxenvs.envs(self.project.root, ('-k', 'x'))
        self.assertEqual(
            sorted(['%s-%s' % (verb, line) for line in ('fake', 'two')
                    for verb in ('functional', 'reproduce', 'mutants',
                                 'gate', 'export')] +
                   ['debian-bookworm', 'debian-bullseye', 'debian-trixie']),
            sorted(envs))
        self.assertEqual([['nova-fork', 'debian', 'trixie']],
                         envs['debian-trixie'][1])
        self.assertEqual([['nova-fork', 'test', 'two', '--', '-k', 'x']],
                         envs['functional-two'][1])
        # export checks every release of the line
        self.assertEqual([['nova-fork', 'export', 'fake'],
                          ['nova-fork', 'export', 'fake', '--release',
                           '0.9.0']], envs['export-fake'][1])
        self.assertIn('nova 2.0.0', envs['reproduce-two'][0])

    def test_lines(self):
        self.assertEqual((0, 'fake\ntwo\n'), self.main('lines'))
        self.assertEqual((0, 'two\n'), self.main('lines', '--with-root'))

    def test_a_command_without_its_line_names_them(self):
        code, text = self.main('test')
        self.assertEqual(2, code)
        self.assertEqual('nova-fork: error: name a line: fake, two '
                         '(bases.ini)\n', text)


class ReleasesTest(testtools.TestCase):
    """nova-fork releases, on pages the fake index serves."""

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        self.project.append(fakes.line_section(
            'two', '2.0.0', 'ab' * 32, 'patches/fake'))

    def releases(self, *versions):
        page = {'files': [
            {'filename': 'nova-%s.tar.gz' % v, 'url': 'https://f/%s' % v,
             'hashes': {'sha256': v.replace('.', '') * 8}}
            for v in versions]}
        self.useFixture(fakes.FakeIndex(page))
        with mock.patch('sys.stdout', new_callable=io.StringIO) as out:
            code = cmd.main(['-q', 'releases'])
        return code, out.getvalue()

    def test_every_line_on_its_newest(self):
        code, out = self.releases('1.0.0', '2.0.0', '2.0.0.0rc1', '3.0.0')
        self.assertEqual(0, code)
        self.assertEqual('line      release   newest on the index\n'
                         'fake      1.0.0     1.0.0\n'
                         'two       2.0.0     2.0.0\n', out)

    def test_a_newer_final_release(self):
        code, out = self.releases('1.0.0', '1.0.10', '1.0.9', '1.1.0.0rc1',
                                  '2.0.0')
        self.assertEqual(1, code)
        self.assertIn('fake      1.0.0     1.0.10\n', out)
        self.assertIn('line fake is on nova 1.0.0; the index has 1.0.10: set '
                      'nova and sha256 (%s) of [fake] in bases.ini, add '
                      '1.0.0 to its releases, then nova-fork backport fake'
                      % ('1010' * 8), out)

    def test_on_the_recorded_pypi_page(self):
        # nova's page on PyPI, as recorded: 18 to 34 final releases
        self.useFixture(fakes.FakeIndex())
        files = index.read()
        finals = [v for v in index.finals(files)
                  if (18, 0, 2) <= facts.version_key(v) <= (34, 0, 0)]
        self.assertEqual(111, len(finals))
        self.assertEqual('25.3.0', index.newest_final(files, 25))
        self.assertEqual([('fake', '1.0.0', None)], releases.behind(
            [config.get_base(self.project.root, 'fake')], files))
