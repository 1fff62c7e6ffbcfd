"""The wiring of the commands: one module each, all in the table."""

import pathlib

import testtools

from nova_fork import cmd
from nova_fork import commands


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
