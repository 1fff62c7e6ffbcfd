import contextlib
import pathlib
from unittest import mock

import fixtures
import testtools

from nova_fork.env import chroot
from nova_fork import errors


class ChrootTest(testtools.TestCase):

    def test_command_runs_in_the_folder(self):
        self.assertEqual(
            ['chroot', '/r', '/bin/sh', '-c', 'cd "$1" && shift && exec "$@"',
             'sh', '/p/build/rocky', '/p/.venvs/rocky/bin/stestr', 'run'],
            chroot.command('/r', ['/p/.venvs/rocky/bin/stestr', 'run'],
                           '/p/build/rocky'))

    def test_mounts_under(self):
        mounts = ('proc /r/proc proc rw 0 0\n'
                  'udev /r/dev devtmpfs rw 0 0\n'
                  '/dev/vda /r2/x ext4 rw 0 0\n'
                  '/dev/vda /r/p\\040q ext4 rw 0 0\n')
        with mock.patch('builtins.open', mock.mock_open(read_data=mounts)):
            self.assertEqual(['/r/proc', '/r/dev', '/r/p q'],
                             chroot.mounts_under('/r'))


class ChrootPackagesTest(testtools.TestCase):

    def test_python_2_7(self):
        self.assertEqual(
            ('python2.7', 'python2.7-dev', 'python3', 'gcc', 'libc6-dev',
             'ca-certificates', 'git'), chroot.packages('python2.7'))

    def test_python_3(self):
        self.assertEqual(
            ('python3.13', 'python3.13-dev', 'python3.13-venv', 'python3',
             'gcc', 'libc6-dev', 'ca-certificates', 'git'),
            chroot.packages('python3.13'))

    def test_suites(self):
        self.assertTrue(chroot.has('bullseye', 'python3.9'))
        self.assertFalse(chroot.has('bullseye', 'python3.11'))
        self.assertTrue(chroot.has('bookworm', 'python3.11'))
        self.assertEqual('3.13', chroot.python3_version('trixie'))
        exc = self.assertRaises(errors.UsageError, chroot.provision, '/p',
                                'trixie', 'python2.7')
        self.assertEqual('Debian trixie has no python2.7 (it has '
                         'python3.13)', str(exc))

    def test_debootstrap_then_apt_get_the_interpreters_packages(self):
        # debootstrap's resolver misses bookworm's python3.11-distutils:
        # apt-get installs the interpreter's packages
        project = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        with mock.patch.object(chroot.os, 'geteuid', return_value=0), \
                mock.patch.object(chroot.shutil, 'which',
                                  return_value='/usr/sbin/debootstrap'), \
                mock.patch.object(chroot, 'unmount_all'), \
                mock.patch.object(chroot, '_run') as run:
            run.side_effect = lambda cmd, what, **kw: (
                pathlib.Path(cmd[-2]).mkdir(parents=True)
                if cmd[0] == 'debootstrap' else '')
            target = chroot.provision(project, 'bookworm', 'python3.11')
        self.assertEqual(project / '.cache/chroot/bookworm', target)
        calls = [c[0][0] for c in run.call_args_list]
        self.assertEqual(
            ['debootstrap', '--variant=minbase',
             '--include=python3,gcc,libc6-dev,ca-certificates,git',
             'bookworm', str(target) + '.partial', chroot.MIRROR], calls[0])
        self.assertEqual(
            ['apt-get', 'install', '-y', '-q', '--no-install-recommends',
             'python3.11', 'python3.11-dev', 'python3.11-venv'],
            calls[-1][-8:])
        self.assertTrue(chroot.ready(target, 'python3.11'))

    def test_a_root_made_for_2_7_gets_3_9_added(self):
        project = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        target = chroot.path(project, 'bullseye')
        (target / chroot.VIRTUALENV_DIR).mkdir(parents=True)
        (target / chroot.STAMP).write_text(
            ' '.join(chroot.packages('python2.7')) + '\n')
        self.assertTrue(chroot.ready(target, 'python2.7'))
        self.assertFalse(chroot.ready(target, 'python3.9'))

        @contextlib.contextmanager
        def mounted(chroot_dir, project):
            yield

        with mock.patch.object(chroot.os, 'geteuid', return_value=0), \
                mock.patch.object(chroot, 'mounted', mounted), \
                mock.patch.object(chroot, '_run') as run:
            chroot.provision(project, 'bullseye', 'python3.9')
        self.assertEqual(
            chroot.command(target, ['apt-get', 'install', '-y', '-q',
                                    '--no-install-recommends', 'python3.9',
                                    'python3.9-dev', 'python3.9-venv'], '/'),
            run.call_args[0][0])
        self.assertTrue(chroot.ready(target, 'python3.9'))
        self.assertTrue(chroot.ready(target, 'python2.7'))
