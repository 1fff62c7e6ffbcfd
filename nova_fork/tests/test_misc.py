import contextlib
import hashlib
import io
import json
import subprocess
from unittest import mock

import testtools

from nova_fork import cmd
from nova_fork import config
from nova_fork.env import chroot
from nova_fork import errors
from nova_fork.proof import prove
from nova_fork.tests import fakes
from nova_fork import toxenvs
from nova_fork.tree import fetch


class ConfigTest(testtools.TestCase):

    def test_parse_series(self):
        self.assertEqual(
            [('0001-a.patch', (), 'u1', (), False),
             ('0002-b.msg', ('x.py', 'y.py'), None, (), True),
             ('0003-c.patch', (), 'u2', ('u1',), False)],
            config.parse_series('# c\n0001-a.patch unit=u1\n\n'
                                '0002-b.msg review x.py y.py\n'
                                '0003-c.patch needs=u1 unit=u2'))

    def series_says(self, old, new):
        project = self.useFixture(fakes.FakeProject())
        base = config.get_base(project.root, 'fake')
        series = project.root / base.patches / 'series'
        series.write_text(series.read_text().replace(old, new))
        return self.assertRaises(errors.UsageError, base.commits)

    def test_needs_an_unknown_unit(self):
        exc = self.series_says('unit=claim-abort',
                               'unit=claim-abort needs=nosuch')
        self.assertIn("entry 1 (0001-Fix-claims.patch) names unit 'nosuch', "
                      'which bases.ini does not define', str(exc))

    def test_a_fix_is_one_unit(self):
        exc = self.series_says(' unit=claim-abort', '')
        self.assertIn('entry 1 (0001-Fix-claims.patch) says no unit, and '
                      'changes nova/compute/claims.py: a patch of nova\'s '
                      'code is a unit of the fix; add unit=NAME, one of '
                      'claim-abort, free-instance', str(exc))
        exc = self.series_says('unit=claim-abort',
                               'unit=claim-abort unit=free-instance')
        self.assertIn("names unit 'claim-abort,free-instance'", str(exc))

    def test_a_patch_of_tests_needs_no_unit(self):
        project = self.useFixture(fakes.FakeProject())
        work = project.root / 'work'
        patches = project.root / 'patches' / 'fake'
        (patches / '0004-Add-a-test.patch').write_text(fakes.make_patch(
            work, 'nova/tests/unit/test_x.py', '', '# test\n', 'A test'))
        series = patches / 'series'
        series.write_text(series.read_text() + '0004-Add-a-test.patch\n')
        base = config.get_base(project.root, 'fake')
        self.assertEqual([None, None], [c.unit for c in base.commits()[2:]])

    def test_units_and_bug_come_from_bases_ini(self):
        project = self.useFixture(fakes.FakeProject())
        self.assertEqual(['claim-abort', 'free-instance'],
                         list(config.load_units(project.root)))
        bug = config.load_bug(project.root)
        self.assertEqual(('1860555', 'devices'),
                         (bug.id, bug.failures[1][0]))
        self.assertEqual(['fake'], list(config.load_bases(project.root)))

    def test_a_line_like_another(self):
        project = self.useFixture(fakes.FakeProject())
        project.append('\n[older]\nlike = fake\nnova = 0.1.0\n'
                       'sha256 = %s\nquilt = yes\n' % ('ab' * 32))
        bases = config.load_bases(project.root)
        self.assertEqual(
            ('0.1.0', True, bases['fake'].regression, bases['fake'].lock),
            (bases['older'].nova, bases['older'].quilt,
             bases['older'].regression, bases['older'].lock))
        project.append('\n[odd]\nlike = odd\n')
        exc = self.assertRaises(errors.UsageError, config.load_bases,
                                project.root)
        self.assertEqual("bases.ini: series odd is like 'odd', which is not "
                         "another line", str(exc))

    def test_unknown_series(self):
        project = self.useFixture(fakes.FakeProject())
        exc = self.assertRaises(errors.UnknownSeries, config.get_base,
                                project.root, 'queens')
        self.assertEqual("unknown series 'queens'; known series: fake "
                         "(see bases.ini)", str(exc))

    def test_variants_shared_by_a_generation(self):
        project = self.useFixture(fakes.FakeProject())
        shared = project.root / 'patches/variants/old/nova/tests'
        shared.mkdir(parents=True)
        (shared / 'test_fake.py').write_text('# the old test API\n')
        project.append('\n[older]\nlike = fake\nnova = 0.1.0\n'
                       'sha256 = %s\nvariants = patches/variants/old\n'
                       '\n[oldest]\nlike = older\nnova = 0.0.1\n'
                       'sha256 = %s\n' % ('ab' * 32, 'cd' * 32))
        bases = config.load_bases(project.root)
        sources = [[c.sources for c in bases[name].commits()][2]
                   for name in ('fake', 'older', 'oldest')]
        self.assertEqual(
            [(project.root / 'nova/tests/test_fake.py',),
             (shared / 'test_fake.py',), (shared / 'test_fake.py',)],
            sources)

    def test_ci_steps(self):
        project = self.useFixture(fakes.FakeProject())
        project.append('\n[older]\nlike = fake\nnova = 0.1.0\n'
                       'sha256 = %s\nci = export\n' % ('ab' * 32))
        bases = config.load_bases(project.root)
        self.assertEqual(('reproduce', 'export'), bases['fake'].ci)
        self.assertEqual(('export',), bases['older'].ci)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(0, cmd.main(['lines', '--ci', 'reproduce']))
        self.assertEqual('fake\n', out.getvalue())
        project.append('\n[bad]\nlike = fake\nci = prove\n')
        exc = self.assertRaises(errors.UsageError, config.load_bases,
                                project.root)
        self.assertEqual('bases.ini: series bad has ci = prove; the steps '
                         'are reproduce, export, root', str(exc))

    def test_series_naming_a_missing_file(self):
        project = self.useFixture(fakes.FakeProject())
        base = config.get_base(project.root, 'fake')
        (project.root / 'nova/tests/test_fake.py').unlink()
        exc = self.assertRaises(errors.UsageError, base.commits)
        self.assertIn('entry 3 (0003-Add-tests.msg) names', str(exc))


class FetchTest(testtools.TestCase):

    def pip_says(self, text):
        done = subprocess.CompletedProcess([], 1, stdout=text)
        return mock.patch.object(fetch.subprocess, 'run', return_value=done)

    def test_no_network(self):
        project = self.useFixture(fakes.FakeProject())
        with self.pip_says('WARNING: Retrying ... NewConnectionError(...)\n'
                           'ERROR: Could not find a version that satisfies '
                           'the requirement nova==2.0.0 (from versions: '
                           'none)\n'):
            exc = self.assertRaises(errors.FetchError, fetch.fetch,
                                    project.root, '2.0.0')
        self.assertIn('PyPI is not reachable (no network?)', str(exc))
        self.assertEqual(['nova-1.0.0.tar.gz'], sorted(
            p.name for p in fetch.cache_dir(project.root).iterdir()))

    def test_unknown_release(self):
        project = self.useFixture(fakes.FakeProject())
        with self.pip_says('ERROR: Could not find a version that satisfies '
                           'the requirement nova==99 (from versions: 1.0)\n'
                           'ERROR: No matching distribution found for '
                           'nova==99\n'):
            exc = self.assertRaises(errors.FetchError, fetch.fetch,
                                    project.root, '99')
        self.assertIn('nova 99 is not a release on PyPI', str(exc))

    def test_sdist_whose_metadata_pip_cannot_build(self):
        # pip prepares an sdist's metadata even to download it; nova
        # 21.0.0's setup.cfg no longer parses: the index gives the file
        project = self.useFixture(fakes.FakeProject())
        data = b'the sdist'
        digest = hashlib.sha256(data).hexdigest()
        index = json.dumps({'files': [{
            'filename': 'nova-21.0.0.tar.gz', 'url': 'https://f/n.tgz',
            'hashes': {'sha256': digest}}]}).encode()
        answers = {'https://pypi.org/simple/nova/': index,
                   'https://f/n.tgz': data}

        def urlopen(request, timeout):
            url = getattr(request, 'full_url', request)
            return contextlib.closing(io.BytesIO(answers[url]))

        with self.pip_says('error: metadata-generation-failed\n'), \
                mock.patch.object(fetch.urllib.request, 'urlopen',
                                  side_effect=urlopen):
            path = fetch.fetch(project.root, '21.0.0', digest)
        self.assertEqual(data, path.read_bytes())
        answers['https://f/n.tgz'] = b'tampered'
        path.unlink()
        with self.pip_says('error: metadata-generation-failed\n'), \
                mock.patch.object(fetch.urllib.request, 'urlopen',
                                  side_effect=urlopen):
            exc = self.assertRaises(errors.HashMismatch, fetch.fetch,
                                    project.root, '21.0.0')
        self.assertIn('sha256 mismatch for nova-21.0.0.tar.gz', str(exc))
        self.assertFalse(path.exists())


class ProveTest(testtools.TestCase):

    def record(self, status, reason=''):
        return {'status': status, 'reason': reason, 'duration': 1.0}

    def test_classify(self):
        bug = config.Bug('1', 'u', (('in use', 'already in use'),
                                    ('devices', 'PCI device')))

        def classify(*args):
            return prove.classify(self.record(*args), bug)

        self.assertEqual('pass', classify('success'))
        self.assertEqual('FAIL (in use)', classify(
            'fail', 'AssertionError: ... Device 0000:81:00.0 is already in '
                    'use'))
        self.assertEqual('FAIL (devices)', classify(
            'fail', 'testtools.matchers._impl.MismatchError: PCI device '
                    '0000:81:00.0 held by two instances'))
        self.assertEqual('ERROR (ImportError: no module x)', classify(
            'fail', 'Traceback\nImportError: no module x\n'))
        self.assertEqual('ERROR (TimeoutException)', classify(
            'fail', 'Traceback\nTimeoutException'))
        # the failure texts are the bug's, from its configuration
        other = config.Bug('2', 'u', (('leak', 'leaked'),))
        self.assertEqual('FAIL (leak)', prove.classify(self.record(
            'fail', 'AssertionError: 2 devices leaked'), other))
        self.assertTrue(classify(
            'fail', 'AssertionError: 2 devices leaked').startswith('ERROR'))

    def rows(self, pristine, fork='pass', without=('FAIL (devices)',)):
        cells = {'pristine': ('m.T.test_a', pristine, 1.0),
                 'fork': ('m.T.test_a', fork, 1.0)}
        for n, outcome in enumerate(without, start=1):
            cells['without %d' % n] = ('m.T.test_a', outcome, 1.0)
        return {'T.test_a': cells}

    def base(self, affects='test_a'):
        """A line whose units a and b each affect the tests affects."""
        base = mock.Mock(regression=('m',), nova='1.0')
        units = {name: config.Unit(name, 's', 'f', (), 'x()', affects)
                 for name in ('a', 'b')}
        patcher = mock.patch.object(config, 'load_units',
                                    return_value=units)
        patcher.start()
        self.addCleanup(patcher.stop)
        return base

    def test_reproduce(self):
        self.assertEqual([], prove.reproduce_problems(
            self.base(), self.rows('FAIL (in use)'), {'a'}))
        problems = prove.reproduce_problems(
            self.base(), self.rows('ERROR (ImportError: x)'), {'a'})
        self.assertEqual(1, len(problems))
        self.assertIn("it gave ERROR (ImportError: x)", problems[0])
        self.assertEqual(2, len(prove.reproduce_problems(
            self.base(), self.rows('pass', fork='FAIL (devices)'), {'a'})))

    def test_reproduce_on_a_release_with_the_units(self):
        # a release that lacks no unit a test is about passes that test
        self.assertEqual([], prove.reproduce_problems(
            self.base(affects='test_zzz'), self.rows('pass'), {'a'})[1:])
        problems = prove.reproduce_problems(
            self.base(affects='test_zzz'), self.rows('FAIL (in use)'), {'a'})
        self.assertIn('on the pristine base it should pass', problems[0])

    def test_reproduce_needs_an_affected_test(self):
        problems = prove.reproduce_problems(
            self.base(affects='test_zzz'), self.rows('pass'), {'a', 'b'})
        self.assertEqual(['no regression test is affected by the units nova '
                          '1.0 lacks (a, b)'], problems)

    def test_affected_pattern(self):
        base = self.base()
        self.assertEqual('(?:test_a)|(?:test_a)',
                         prove.affected_pattern(base, {'b', 'a'}))
        self.assertEqual('', prove.affected_pattern(base, set()))

    def test_mutants(self):
        columns = ['pristine', 'fork', 'without 1', 'without 2']
        rows = self.rows('FAIL (devices)',
                         without=('FAIL (devices)', 'pass'))
        problems = prove.mutant_problems(self.base(), columns, rows)
        self.assertEqual(['the fork without 2 passes every regression '
                          'test: that fix is not covered'], problems)

    def test_render(self):
        text = prove.render(['pristine', 'fork'],
                            self.rows('FAIL (in use)'))
        self.assertIn('T.test_a  FAIL (in use)  pass', text)


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
            self.assertEqual(0, cmd.main(['build', 'fake', '--pristine']))
        self.assertEqual(str(project.root / 'build' / 'fake-pristine'),
                         out.getvalue().strip())


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
