import hashlib
import io
import json
import pathlib
import shutil
from unittest import mock

import testtools

from nova_fork import cmd
from nova_fork import config
from nova_fork.dist import export
from nova_fork.dist import quilt
from nova_fork import errors
from nova_fork.tests import fakes
from nova_fork.tree import backport
from nova_fork.tree import build
from nova_fork.tree import fetch
from nova_fork.tree import gitutils
from nova_fork.tree import refresh
from nova_fork import units


class ExportTest(testtools.TestCase):

    def test_export_applies_with_git_am(self):
        project = self.useFixture(fakes.FakeProject())
        base = config.get_base(project.root, 'fake')
        dest = export.export(base)
        names = sorted(p.name for p in dest.iterdir())
        self.assertEqual(['0001-Fix-claims.patch', '0002-Fix-manager.patch',
                          '0003-Add-regression-tests.patch'], names)
        text = (dest / '0002-Fix-manager.patch').read_text()
        self.assertIn('releasenotes/notes/fake.yaml', text)
        self.assertTrue(text.startswith('From 0000000000000000000000000000'))

    def test_export_refuses_a_series_that_does_not_reproduce(self):
        project = self.useFixture(fakes.FakeProject())
        base = config.get_base(project.root, 'fake')
        real = export.format_patch

        def first_only(tree, since, outdir):
            return real(tree, since, outdir)[:1]

        with mock.patch.object(export, 'format_patch',
                               side_effect=first_only):
            exc = self.assertRaises(errors.PatchError, export.export, base)
        self.assertIn('does not reproduce the fork', str(exc))
        self.assertFalse((project.root / 'dist' / 'fake').exists())


class CheckTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        self.root = self.project.root

    def run_check(self, *args):
        with mock.patch('sys.stdout', new_callable=io.StringIO) as out, \
                mock.patch('sys.stderr', new_callable=io.StringIO) as err:
            code = cmd.main(['check'] + list(args))
        return code, out.getvalue(), err.getvalue()

    def test_release_that_needs_every_unit(self):
        code, out, _ = self.run_check('1.0.0')
        self.assertEqual(1, code)
        self.assertEqual(
            'nova 1.0.0 (one)\n'
            '  needs  claim-abort    Claim.abort aborts on the instance\n'
            '  needs  free-instance  the tracker frees with the instance\n'
            'nova 1.0.0 needs claim-abort, free-instance of the fix for bug '
            '1860555: nova-fork build fake\n', out)

    def test_release_with_every_unit(self):
        self.project.add_release('1.0.1', fakes.FIXED_CLAIMS,
                                 fakes.FIXED_MANAGER)
        code, out, _ = self.run_check('1.0.1', '--json')
        self.assertEqual(0, code)
        self.assertEqual({'version': '1.0.1', 'line': 'fake',
                          'has': ['claim-abort', 'free-instance'],
                          'needs': []}, json.loads(out))

    def test_code_that_moved_gets_the_same_answer(self):
        # the fixes upstream wrote their own way, around other code
        claims = '# moved down\n\n\n' + fakes.FIXED_CLAIMS.replace(
            'self.context, self._ref,\n', 'ctx, self._ref,\n').replace(
            'self.nodename)', 'node)  # reformatted')
        self.project.add_release('1.0.2', claims, fakes.MANAGER.replace(
            'for dev in self.pci_devs:', 'for dev in list(self.pci_devs):'))
        code, out, _ = self.run_check('1.0.2', '--json')
        self.assertEqual(1, code)
        self.assertEqual({'version': '1.0.2', 'line': 'fake',
                          'has': ['claim-abort'],
                          'needs': ['free-instance']}, json.loads(out))

    def test_release_not_in_bases_ini_names_how_to_add_it(self):
        self.project.add_release('1.0.3')
        code, out, _ = self.run_check('1.0.3')
        self.assertEqual(1, code)
        sdist = self.project.root / '.cache/sdists/nova-1.0.3.tar.gz'
        self.assertIn('line fake serves it once its releases in bases.ini '
                      'list "1.0.3 %s"' % hashlib.sha256(
                          sdist.read_bytes()).hexdigest(), out)

    def test_release_no_line_serves(self):
        self.project.add_release('2.0.0', manager=fakes.FIXED_MANAGER)
        code, out, _ = self.run_check('2.0.0', '--json')
        self.assertEqual((1, None), (code, json.loads(out)['line']))
        code, out, _ = self.run_check('2.0.0')
        self.assertIn('needs claim-abort of the fix for bug 1860555; no line '
                      'serves two yet', out)

    def test_the_line_of_the_release_is_picked(self):
        self.project.append(fakes.line_section(
            'two', '2.0.0', 'ab' * 32, 'patches/fake'))
        self.project.add_release('2.0.5')
        self.project.add_release('1.0.5')
        self.assertEqual('two', json.loads(
            self.run_check('2.0.5', '--json')[1])['line'])
        self.assertEqual('fake', json.loads(
            self.run_check('1.0.5', '--json')[1])['line'])

    def test_errors_are_one_line_and_exit_2_or_more(self):
        self.project.add_release('1.9.0', claims='# no claims here\n')
        no_pypi = mock.patch.object(
            fetch, '_pip_download', side_effect=errors.FetchError(
                'cannot download nova==9.9.9: PyPI is not reachable'))
        for args, code, text in [
                (['abc'], 2, "'abc' is not a nova version"),
                (['0.9.0'], 2, 'nova 0.9.0 is older than one (1.0.0), the '
                               'first release this project covers'),
                (['1.9.0'], 5, 'cannot tell which units of the fix nova '
                               '1.9.0 has: nova/compute/claims.py has none '
                               'of Claim.abort'),
                (['9.9.9'], 3, 'PyPI is not reachable')]:
            with no_pypi:
                got, out, err = self.run_check(*args)
            self.assertEqual(code, got, args)
            self.assertEqual('', out)
            self.assertEqual(1, len(err.splitlines()), err)
            self.assertIn(text, err)


class UnitsTest(testtools.TestCase):

    def unit(self, lacks, functions=('C.f',)):
        return config.Unit('u', 's', 'x.py', functions, lacks)

    def test_verdicts(self):
        unit = self.unit('self.g(_, self.instance, ...)')
        code = 'class C:\n    def f(self):\n        self.g(a, %s)\n'
        self.assertEqual(units.NEEDS, units.verdict(
            unit, code % 'self.instance, b')[0])
        self.assertEqual(units.HAS, units.verdict(
            unit, code % 'self.instance_ref, b')[0])

    def test_only_the_functions_named_are_read(self):
        unit = self.unit('self.g(_)', functions=('C.f', 'C.gone'))
        code = ('class C:\n    def f(self):\n        self.g(a, b)\n'
                '    def h(self):\n        self.g(a)\n')
        self.assertEqual((units.HAS, 'in C.f'), units.verdict(unit, code))

    def test_no_call_to_read_is_no_answer(self):
        unit = self.unit('self.g(_)')
        exc = self.assertRaises(
            units.UnknownCode, units.verdict, unit,
            'class C:\n    def f(self):\n        self.other(a)\n')
        self.assertEqual('C.f makes no call to self.g', str(exc))

    def test_bad_pattern(self):
        self.assertRaises(errors.UsageError, units.parse_pattern, 'a = b')


class RefreshTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        self.base = config.get_base(self.project.root, 'fake')
        self.tree = build.build(self.base)

    def git(self, *args):
        return gitutils.git(self.tree, *args)

    def patches(self):
        return {p.name: p.read_text() for p in self.base.patches.iterdir()}

    def test_right_after_a_build_nothing_changes(self):
        # the fake's patches were not written by the tool: the first
        # refresh writes them as format-patch does, and then they stay
        self.assertEqual(
            [pathlib.Path('patches/fake/0001-Fix-claims.patch'),
             pathlib.Path('patches/fake/0002-Fix-manager.patch')],
            refresh.refresh(self.base))
        head = gitutils.out(self.tree, 'rev-parse', 'HEAD')
        self.assertEqual(head, gitutils.out(build.build(self.base),
                                            'rev-parse', 'HEAD'))
        self.assertEqual([], refresh.refresh(self.base))

    def edit_second_commit(self):
        commits = gitutils.out(self.tree, 'rev-list', '--reverse',
                               '1.0.0..HEAD').split()
        self.git('checkout', '-q', '--detach', commits[1])
        manager = self.tree / 'nova/pci/manager.py'
        manager.write_text(manager.read_text().replace('dev,', 'device,'))
        with (self.tree / 'releasenotes/notes/fake.yaml').open('a') as f:
            f.write('# more\n')
        self.git('commit', '-qa', '--amend', '--no-edit')
        self.git('cherry-pick', commits[2])

    def test_edited_commits_go_back_where_they_came_from(self):
        refresh.refresh(self.base)
        self.edit_second_commit()
        changed = refresh.refresh(self.base)
        self.assertEqual([pathlib.Path('patches/fake/0002-Fix-manager.patch'),
                          pathlib.Path('releasenotes/notes/fake.yaml')],
                         changed)
        patch = (self.base.patches / '0002-Fix-manager.patch').read_text()
        self.assertIn('+            self._free_device(device, instance)',
                      patch)
        # the release note stays a plain file, out of the patch
        self.assertNotIn('fake.yaml', patch)
        # and a new build from them is the edited tree
        head = gitutils.out(self.tree, 'rev-parse', 'HEAD^{tree}')
        shutil.rmtree(self.tree)
        self.assertEqual(head, gitutils.out(build.build(self.base),
                                            'rev-parse', 'HEAD^{tree}'))

    def test_a_split_commit_needs_its_series_entry(self):
        self.git('commit', '-q', '--allow-empty', '-m', 'Another')
        before = self.patches()
        exc = self.assertRaises(errors.UsageError, refresh.refresh,
                                self.base)
        self.assertIn('has 4 commits after 1.0.0, and %s lists 3' % (
            self.base.patches / 'series'), str(exc))
        self.assertEqual(before, self.patches())

    def test_a_message_entry_must_not_change_upstream_files(self):
        (self.tree / 'nova/compute/claims.py').write_text('# changed\n')
        self.git('commit', '-qa', '--amend', '--no-edit')
        before = self.patches()
        exc = self.assertRaises(errors.UsageError, refresh.refresh,
                                self.base)
        self.assertEqual(before, self.patches())
        self.assertIn('changes nova/compute/claims.py, which entry '
                      '0003-Add-tests.msg does not list', str(exc))


class QuiltTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        if not shutil.which('quilt'):
            self.skipTest('quilt is not installed')
        self.project = self.useFixture(fakes.FakeProject())
        sha256 = self.project.add_release('1.0.9', ChangeLog='1.0.9\n')
        self.project.append('quilt = true\nreleases = 1.0.9 %s\n' % sha256)
        self.base = config.get_base(self.project.root, 'fake')

    def test_quilt_series_with_dep3_headers(self):
        dest = export.export(self.base)
        quilt_dir = dest / 'quilt'
        names = (quilt_dir / 'series').read_text().split()
        self.assertEqual(['0001-Fix-claims.patch', '0002-Fix-manager.patch',
                          '0003-Add-regression-tests.patch'], names)
        text = (quilt_dir / names[1]).read_text()
        self.assertTrue(text.startswith('Description: Fix manager\n'))
        for field in ('Author: t <t@example.org>', 'Origin: vendor, nova-fork',
                      'Bug: https://bugs.launchpad.net/nova/+bug/1860555',
                      'Last-Update: 2020-01-01'):
            self.assertIn('\n' + field, text)
        self.assertIn('releasenotes/notes/fake.yaml', text)

    def test_quilt_series_that_does_not_push(self):
        real = quilt.write_series

        def broken(tree, since, outdir, bug):
            names = real(tree, since, outdir, bug)
            patch = outdir / names[0]
            patch.write_text(patch.read_text().replace(
                '     def abort(self):', '     def abandon(self):'))
            return names

        with mock.patch.object(quilt, 'write_series', side_effect=broken):
            exc = self.assertRaises(errors.PatchError, export.export,
                                    self.base)
        self.assertIn('quilt push -a fails on nova 1.0.0', str(exc))
        self.assertFalse((self.project.root / 'dist' / 'fake').exists())


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

    def test_backport_of_a_line_that_backports_none(self):
        base = config.get_base(self.project.root, 'fake')
        exc = self.assertRaises(errors.UsageError, backport.backport, base)
        self.assertEqual('line fake backports no other line: give it '
                         'backport_of in bases.ini', str(exc))
