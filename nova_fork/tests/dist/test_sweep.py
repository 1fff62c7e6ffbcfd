import io
from unittest import mock

import testtools

from nova_fork import cmd
from nova_fork.dist import sweep
from nova_fork.tests import fakes


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
                         '3-way merge (context moved) to 1, and not to 1',
                         sweep.summary(rows))
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
                      '3-way merge (context moved) to 0, and not to 1',
                      out.getvalue())
        self.assertFalse((self.project.root / sweep.INC).exists())
