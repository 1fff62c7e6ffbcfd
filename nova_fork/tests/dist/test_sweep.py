import dataclasses
import io
import pathlib
import re
from unittest import mock

import testtools

from nova_fork import cmd
from nova_fork import config
from nova_fork.dist import sweep
from nova_fork import errors
from nova_fork.tests import fakes
from nova_fork.tree import backport
from nova_fork.tree import build
from nova_fork.tree import gitutils
from nova_fork.tree import pins


class SweepTest(testtools.TestCase):
    """nova-fork sweep over the fake line's releases on a fake index."""

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        # 1.0.3: as 1.0.0; 1.0.4: its claims changed where the fix does,
        # a conflict; 1.0.5: has both units; 1.0.6: the context of the
        # fix changed, a 3-way merge takes it
        changed = fakes.CLAIMS.replace(
            'self.instance = instance.obj_clone()',
            'self.instance = instance.copy()')
        moved = fakes.CLAIMS.replace('class Claim(object):',
                                     'class Claim(base.Claim):')
        versions = {
            '1.0.0': self.project.sha256,
            '1.0.3': self.project.add_release('1.0.3'),
            '1.0.4': self.project.add_release('1.0.4', claims=changed),
            '1.0.5': self.project.add_release(
                '1.0.5', claims=fakes.FIXED_CLAIMS,
                manager=fakes.FIXED_MANAGER),
            '1.0.6': self.project.add_release('1.0.6', claims=moved),
        }
        self.useFixture(fakes.FakeIndex({'files': [
            {'filename': 'nova-%s.tar.gz' % v, 'url': 'https://f/%s' % v,
             'hashes': {'sha256': sha}} for v, sha in versions.items()] + [
            {'filename': 'nova-1.1.0.0rc1.tar.gz', 'url': 'https://f/rc',
             'hashes': {}}]}))

    def test_rows(self):
        rows = sweep.sweep(self.project.root, '1.0.0', '9.0.0')
        self.assertEqual(['1.0.0', '1.0.3', '1.0.4', '1.0.5', '1.0.6'],
                         [r.release for r in rows])
        lacks = ('claim-abort', 'free-instance')
        self.assertEqual([lacks] * 3 + [(), lacks], [r.lacks for r in rows])
        self.assertEqual(['ok', 'ok', 'fails', '-', '3-way'],
                         [r.am for r in rows])
        self.assertEqual(
            'patches/fake/0001-Fix-claims.patch does not apply to nova '
            '1.0.4, even with a 3-way merge: it conflicts in '
            'nova/compute/claims.py; backport it to 1.0.4 (nova-fork '
            'backport fake --release 1.0.4)', rows[2].todo)
        self.assertEqual('has every unit: nothing to ship', rows[3].todo)
        self.assertEqual('context moved in 0001-Fix-claims.patch: the '
                         'release\'s own series, nova-fork export fake '
                         '--release 1.0.6', rows[4].todo)
        self.assertEqual('5 releases; 4 lack units of the fix: the series '
                         'of their line applies unchanged to 2, with a '
                         '3-way merge (context moved) to 1, with a backport '
                         'of their own to 0, and not to 1',
                         sweep.summary(rows))
        # the release furthest from the line's own that it applies to
        self.assertEqual({'fake': '1.0.3'},
                         sweep.chosen(rows, self.project.root))
        # the trees of releases bases.ini does not list are not kept (their
        # imports are, for the next sweep)
        self.assertEqual(['fake', 'imports'], sorted(
            p.name for p in (self.project.root / 'build').iterdir()
            if not p.name.startswith('.')))

    def test_command_exits_1_where_a_series_does_not_apply(self):
        with mock.patch('sys.stdout', new_callable=io.StringIO) as out:
            code = cmd.main(['-q', 'sweep', '--first', '1.0.3', '--last',
                             '1.0.4'])
        self.assertEqual(1, code)
        self.assertIn('sweep: 2 releases; 2 lack units of the fix: the '
                      'series of their line applies unchanged to 1, with a '
                      '3-way merge (context moved) to 0, with a backport of '
                      'their own to 0, and not to 1', out.getvalue())
        self.assertFalse((self.project.root / sweep.INC).exists())

    def test_a_release_that_conflicts_gets_its_own_backport(self):
        root = self.project.root
        base = pins.on_release(config.get_base(root, 'fake'), '1.0.4')
        exc = self.assertRaises(errors.PatchError, backport.backport, base)
        self.assertIn('onto nova 1.0.4 conflicts in nova/compute/claims.py',
                      str(exc))
        self.assertIn('then "nova-fork refresh fake --release 1.0.4"',
                      str(exc))
        # a person resolves it, says what had to change and picks the rest
        tree = build.build_dir(root) / 'fake-1.0.4'
        (tree / 'nova/compute/claims.py').write_text(
            fakes.FIXED_CLAIMS.replace('instance.obj_clone()',
                                       'instance.copy()'))
        gitutils.git(tree, 'add', 'nova/compute/claims.py')
        picked = gitutils.out(tree, 'rev-parse', 'CHERRY_PICK_HEAD')
        message = gitutils.out(tree, 'show', '-s', '--format=%B', picked)
        gitutils.git(tree, 'commit', '-q', '-m', '%s\n\nOn nova 1.0.4 '
                     'claims copy the instance.\n\n(cherry picked from '
                     'commit %s)' % (message.strip(), picked))
        rest = re.search(r'git cherry-pick -x ([0-9a-f ]+)\)', str(exc))
        gitutils.git(tree, 'cherry-pick', '-x', *rest.group(1).split())
        self.assertEqual(
            [pathlib.Path('patches/fake/1.0.4/0001-Fix-claims.patch')],
            backport.refresh.refresh(base))
        own = root / 'patches/fake/1.0.4/0001-Fix-claims.patch'
        self.assertIn('On nova 1.0.4 claims copy the instance.',
                      own.read_text())
        self.assertIn('(cherry picked from commit %s)' % picked,
                      own.read_text())
        # the line's patches stay as they are; the release's tree is built
        # from its own backport, and the sweep says so
        self.assertIn('instance.obj_clone()', (
            root / 'patches/fake/0001-Fix-claims.patch').read_text())
        [row] = sweep.sweep(root, '1.0.4', '1.0.4')
        self.assertEqual(('backport', True), (row.am, row.applies))
        self.assertEqual('its own backport of 0001-Fix-claims.patch, in '
                         'patches/fake/1.0.4: the release\'s own series, '
                         'nova-fork export fake --release 1.0.4', row.todo)

    def test_releases_share_a_backport_in_a_folder_of_their_range(self):
        line = config.get_base(self.project.root, 'fake')
        shared = line.patches / '1.0.2..1.0.4'
        shared.mkdir()
        on = [dataclasses.replace(line, nova=v).release_dir
              for v in ('1.0.1', '1.0.2', '1.0.4', '1.0.5')]
        self.assertEqual([line.patches / '1.0.1', shared, shared,
                          line.patches / '1.0.5'], on)
