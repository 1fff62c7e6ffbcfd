"""The Zuul configuration generated from bases.ini, and its timings."""

import io
import json
import pathlib
from unittest import mock

import fixtures
import testtools

from nova_fork.ci import local
from nova_fork.ci import timings
from nova_fork.ci import yamltext
from nova_fork.ci import zuulconf
from nova_fork import cmd
from nova_fork import config
from nova_fork import errors
from nova_fork.proof import gate
from nova_fork.tests import fakes
from nova_fork.tests.proof import test_gatetable

PROJECT = pathlib.Path(__file__).resolve().parents[3]

try:
    import yaml
except ImportError:  # the tool needs no YAML reader; stestr brings one
    yaml = None


class CommittedTest(testtools.TestCase):
    """The project's own .zuul.d/: what bases.ini gives, committed."""

    def test_the_configuration_is_up_to_date(self):
        self.assertEqual(
            [], zuulconf.stale(PROJECT),
            '.zuul.d/ is not what bases.ini and .zuul.d/timings.json give: '
            'run nova-fork zuul --write')

    def test_every_line_has_its_jobs(self):
        jobs = zuulconf.jobs(PROJECT)
        for line in config.load_bases(PROJECT):
            for kind in zuulconf.KINDS:
                self.assertEqual(
                    'nova-fork-%s' % kind,
                    jobs['nova-fork-%s-%s' % (kind, line)]['parent'])
                self.assertEqual(
                    line, jobs['nova-fork-%s-%s' % (kind, line)]['vars']
                    ['nova_fork_line'])
        self.assertTrue(jobs['nova-fork-base']['abstract'])
        self.assertEqual(zuulconf.BASE_JOB, jobs['nova-fork-base']['parent'])

    def test_every_playbook_exists(self):
        books = zuulconf.playbooks(PROJECT)
        self.assertEqual(['playbooks/nova-fork/post.yaml',
                          'playbooks/nova-fork/pre.yaml',
                          'playbooks/nova-fork/run.yaml'], books)
        for book in books:
            self.assertTrue((PROJECT / book).is_file(), book)

    def test_the_committed_timings_are_json(self):
        data = json.loads((PROJECT / timings.FILE).read_text())
        self.assertIn('lines', data)


class FakeProjectTest(testtools.TestCase):
    """A project of two lines, with no .zuul.d/ yet."""

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        self.root = self.project.root
        ini = self.root / 'bases.ini'
        ini.write_text(ini.read_text().replace(
            'python = python3\n', 'python = python3.11\n'))
        self.project.append(fakes.line_section(
            'old', '1.0.0', self.project.sha256, 'patches/fake',
            'variants = patches/v/gen\nreleases =\n    0.9.0 %s\n'
            % ('0' * 64)).replace('python3\n', 'python2.7\n'))

    def test_write_then_up_to_date(self):
        self.assertEqual(
            [('jobs.yaml', 'missing'), ('lines.yaml', 'missing'),
             ('nodesets.yaml', 'missing'), ('project.yaml', 'missing')],
            zuulconf.stale(self.root))
        written = zuulconf.write(self.root)
        self.assertEqual(4, len(written))
        self.assertEqual([], zuulconf.stale(self.root))

    def test_a_change_of_bases_ini_makes_it_stale(self):
        zuulconf.write(self.root)
        self.project.append('\n[new]\nlike = fake\n')
        self.assertEqual([('lines.yaml', 'out of date'),
                          ('project.yaml', 'out of date')],
                         zuulconf.stale(self.root))

    def test_an_edit_by_hand_and_a_file_of_its_own(self):
        zuulconf.write(self.root)
        jobs = self.root / zuulconf.FOLDER / 'jobs.yaml'
        jobs.write_text(jobs.read_text().replace('timeout: 3600',
                                                 'timeout: 60'))
        (self.root / zuulconf.FOLDER / 'mine.yaml').write_text('[]\n')
        self.assertEqual([('jobs.yaml', 'out of date'),
                          ('mine.yaml', 'not generated')],
                         zuulconf.stale(self.root))

    def test_the_jobs_of_a_line(self):
        jobs = zuulconf.jobs(self.root)
        old = jobs['nova-fork-export-old']
        self.assertEqual('nova-fork-debian-bullseye', old['nodeset'])
        self.assertEqual(['^patches/fake/', '^patches/v/gen/', '^nova/',
                          '^releasenotes/notes/', r'^locks/fake\.txt$'],
                         old['files'])
        self.assertEqual([['export', 'old'],
                          ['export', 'old', '--release', '0.9.0']],
                         old['vars']['nova_fork_commands'])
        self.assertEqual('python2.7', old['vars']['nova_fork_python'])
        self.assertIn('python2.7-dev', old['vars']['nova_fork_packages'])
        self.assertIn('quilt', old['vars']['nova_fork_packages'])
        unit = jobs['nova-fork-unit-fake']
        self.assertEqual([['gate', 'fake', '--only', 'unit']],
                         unit['vars']['nova_fork_commands'])
        self.assertEqual('nova-fork-debian-bookworm', unit['nodeset'])
        self.assertNotIn('files', unit)
        self.assertEqual([['reproduce', 'fake']], jobs[
            'nova-fork-reproduce-fake']['vars']['nova_fork_commands'])

    def test_the_project_stanza(self):
        stanza = zuulconf.project(config.load_bases(self.root))['project']
        self.assertEqual(['nova-fork-export-fake', 'nova-fork-reproduce-fake',
                          'nova-fork-export-old', 'nova-fork-reproduce-old'],
                         stanza['check']['jobs'])
        self.assertEqual(stanza['check'], stanza['gate'])
        self.assertEqual(['nova-fork-mutants-fake', 'nova-fork-unit-fake',
                          'nova-fork-functional-fake',
                          'nova-fork-mutants-old', 'nova-fork-unit-old',
                          'nova-fork-functional-old'],
                         stanza['periodic']['jobs'])

    def test_a_python_with_no_node(self):
        ini = self.root / 'bases.ini'
        ini.write_text(ini.read_text().replace('python = python2.7',
                                               'python = python3.5'))
        exc = self.assertRaises(errors.UsageError, zuulconf.generate,
                                self.root)
        self.assertEqual(
            'no Zuul node for python3.5 of line old: add its version to '
            'NODES in nova_fork/ci/zuulconf.py (a label whose distribution '
            'has it)', str(exc))

    def test_the_timeout_comes_from_the_committed_timings_only(self):
        # the gate's cache, not in git, changes nothing
        before = zuulconf.generate(self.root)
        records = gate.cache_dir(self.root)
        records.mkdir(parents=True)
        (records / 'a.json').write_text(json.dumps(test_gatetable.record(
            line='fake', release='1.0.0', step='functional',
            seconds=3000.0)))
        self.assertEqual(before, zuulconf.generate(self.root))
        self.assertEqual(9600, zuulconf.jobs(self.root)[
            'nova-fork-functional-fake']['timeout'])
        # nova-fork zuul --timings copies what it needs into timings.json
        path, lines = timings.write(self.root, config.load_bases(self.root))
        self.assertEqual({'fake': {'functional': {
            'seconds': 3000, 'date': '2026-12-07',
            'commit': 'f98fbfa0c0ff', 'release': '1.0.0'}}}, lines)
        self.assertEqual(lines, timings.read(self.root))
        self.assertEqual(7200, zuulconf.jobs(self.root)[
            'nova-fork-functional-fake']['timeout'])
        text = zuulconf.generate(self.root)['lines.yaml']
        self.assertIn('# timeout: 900 s to set up + 2 x 3000 s measured '
                      '(gate, 2026-12-07, f98fbfa0c0ff)\n- job:\n'
                      '    name: nova-fork-functional-fake\n', text)
        self.assertIn('# timeout: the default of unit jobs: no measured '
                      'time yet\n- job:\n    name: nova-fork-unit-fake\n',
                      text)

    def test_the_command(self):
        with mock.patch('sys.stdout', new_callable=io.StringIO) as out, \
                mock.patch('sys.stderr', new_callable=io.StringIO) as err:
            self.assertEqual(2, cmd.main(['zuul']))
            self.assertEqual(0, cmd.main(['zuul', '--write']))
            self.assertEqual(0, cmd.main(['zuul']))
        self.assertEqual(
            'nova-fork: error: .zuul.d/ is not what bases.ini and '
            '.zuul.d/timings.json give (jobs.yaml missing, lines.yaml '
            'missing, nodesets.yaml missing, project.yaml missing): run '
            'nova-fork zuul --write, and commit it\n', err.getvalue())
        self.assertTrue(out.getvalue().endswith(
            'zuul: .zuul.d/ is up to date: 16 jobs of 2 lines\n'))

    def test_the_command_timings(self):
        with mock.patch('sys.stdout', new_callable=io.StringIO) as out:
            self.assertEqual(0, cmd.main(['zuul', '--timings']))
        self.assertEqual('zuul: wrote .zuul.d/timings.json: 0 measured '
                         'suites of 0 lines\n', out.getvalue().splitlines(
                             True)[0])
        self.assertEqual([], zuulconf.stale(self.root))


class RequirementsTest(testtools.TestCase):
    """tox -e zuul installs a pinned set, --no-deps."""

    def test_every_requirement_is_pinned(self):
        lines = [line.strip() for line in (
            PROJECT / 'tools' / 'zuul-requirements.txt').read_text()
            .splitlines() if line.strip() and not line.startswith('#')]
        self.assertEqual([], [line for line in lines
                              if len(line.split('==')) != 2])
        pins = dict(line.split('==') for line in lines)
        self.assertEqual('14.3.0', pins['zuul'])
        self.assertIn('ansible-core', pins)
        self.assertLess(len(pins), 40)
        tox = (PROJECT / 'tox.ini').read_text()
        self.assertIn('install_command = python -I -m pip install '
                      '--no-deps {opts} {packages}', tox)


class TimeoutTest(testtools.TestCase):

    def test_every_kind_has_a_default(self):
        self.assertEqual(tuple(zuulconf.KINDS), timings.KINDS)
        self.assertEqual(set(timings.KINDS), set(timings.DEFAULTS))

    def test_defaults_within_the_tenants_limit(self):
        for kind in timings.KINDS:
            seconds, why = timings.timeout(kind)
            self.assertLessEqual(seconds, timings.MOST)
            self.assertIn('no measured time yet', why)

    def test_measured(self):
        self.assertEqual(1800, timings.timeout('unit', {
            'seconds': 420, 'date': 'd', 'commit': 'c'})[0])
        self.assertEqual(timings.MOST, timings.timeout('unit', {
            'seconds': 9000, 'date': 'd', 'commit': 'c'})[0])


class YamlTextTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        if yaml is None:
            self.skipTest('no YAML reader here to read it back')

    def test_read_back_as_written(self):
        data = {'job': {
            'name': 'x', 'abstract': True, 'timeout': 60, 'none': None,
            'description': 'two\nlines\n', 'empty': [], 'nothing': {},
            'words': ['2024.1', 'yes', 'No', 'a: b', "it's", '^a\\.b$',
                      '{{ jinja }}', '- dash', '#hash', '', ' lead', '3',
                      '1e3', '0x1f', 'tab\there', 'é'],
            'argv': [['export', '2024.1', '--release', '29.2.0']],
            'nested': [{'name': 'node', 'label': 'l'}]}}
        text = yamltext.dump([('a comment\nof two lines', data)], 'top')
        self.assertEqual([data], yaml.safe_load(text))
        self.assertTrue(text.startswith('# top\n\n# a comment\n# of two '
                                        'lines\n- job:\n'))

    def test_the_committed_files_read_back(self):
        for name, items in zuulconf.documents(PROJECT).items():
            self.assertEqual([item for _, item in items], yaml.safe_load(
                (PROJECT / zuulconf.FOLDER / name).read_text()), name)

    def test_no_yaml_for_other_types(self):
        self.assertRaises(TypeError, yamltext.scalar, 1.5)


class LocalRunTest(testtools.TestCase):

    def test_the_jobs_playbooks_in_zuuls_order(self):
        attrs, books = local.merged(zuulconf.jobs(PROJECT),
                                    'nova-fork-export-2024.1')
        self.assertEqual([('pre', 'playbooks/nova-fork/pre.yaml'),
                          ('run', 'playbooks/nova-fork/run.yaml'),
                          ('post', 'playbooks/nova-fork/post.yaml')], books)
        self.assertEqual('2024.1', attrs['vars']['nova_fork_line'])
        self.assertFalse(attrs['vars']['nova_fork_needs_python'])
        self.assertEqual('/opt/cache/nova-fork/sdists',
                         attrs['vars']['nova_fork_sdist_cache'])
        self.assertEqual('nova-fork-debian-bookworm', attrs['nodeset'])

    def test_an_unknown_job(self):
        exc = self.assertRaises(errors.UsageError, local.merged,
                                zuulconf.jobs(PROJECT), 'nova-fork-x')
        self.assertIn('no job nova-fork-x in .zuul.d/', str(exc))

    def test_the_variables_zuul_gives(self):
        folder = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        attrs, _ = local.merged(zuulconf.jobs(PROJECT),
                                'nova-fork-reproduce-2024.1')
        zuul = local.zuul_vars(PROJECT, 'nova-fork-reproduce-2024.1',
                               attrs, folder)
        self.assertEqual('check', zuul['pipeline'])
        self.assertEqual(str(PROJECT), zuul['project']['src_dir'])
        self.assertEqual(str(folder / 'logs'), zuul['executor']['log_root'])
        hosts = local.inventory(attrs, zuul)['all']
        self.assertEqual(['node'], list(hosts['hosts']))
        self.assertEqual('local',
                         hosts['hosts']['node']['ansible_connection'])
        self.assertEqual([['reproduce', '2024.1']],
                         hosts['vars']['nova_fork_commands'])
        self.assertIs(zuul, hosts['vars']['zuul'])

    def test_without_ansible(self):
        with mock.patch.object(local, 'ansible_playbook', return_value=None):
            exc = self.assertRaises(errors.UsageError, local.prepare,
                                    pathlib.Path('/nonexistent'))
        self.assertIn('run tox -e zuul-local -- JOB', str(exc))
