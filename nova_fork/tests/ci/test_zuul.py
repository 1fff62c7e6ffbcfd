"""The configuration of .zuul.d/ through Zuul's own loader, and ansible.

These need zuul and ansible-core, which ``tox -e zuul`` installs, pinned
(tools/zuul-requirements.txt); elsewhere (``tox -e unit``) they are
skipped, unless NOVA_FORK_ZUUL=1 (set by ``tox -e zuul``) says they must
run.
"""

import importlib.util
import os
import pathlib
import subprocess

import fixtures
import testtools

from nova_fork.ci import local
from nova_fork.ci import zuulconf
from nova_fork.ci import zuulload

PROJECT = pathlib.Path(__file__).resolve().parents[3]


def needs(module):
    """Skip the test without module, or fail where NOVA_FORK_ZUUL=1."""
    def check(test):
        if importlib.util.find_spec(module) is not None:
            return
        if os.environ.get('NOVA_FORK_ZUUL') == '1':
            test.fail('%s is not installed: tox -e zuul installs it from '
                      'tools/zuul-requirements.txt' % module)
        test.skipTest('%s is not installed (tox -e zuul)' % module)
    return check


class ZuulLoaderTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        needs('zuul')(self)
        self.texts = zuulconf.written(PROJECT)

    def broken(self, name, old, new):
        """Zuul's problems with old replaced by new in file name."""
        self.assertIn(old, self.texts[name])
        texts = dict(self.texts)
        texts[name] = texts[name].replace(old, new, 1)
        return zuulload.check(PROJECT, texts)

    def test_zuul_accepts_the_configuration(self):
        self.assertEqual([], zuulload.check(PROJECT))

    def test_every_job_is_in_zuuls_layout(self):
        problems, layout = zuulload.load(self.texts)
        self.assertEqual([], problems)
        ours = set(zuulconf.jobs(PROJECT))
        self.assertEqual(set(), ours - set(layout.jobs))
        self.assertEqual(ours | {'base', 'noop'}, set(layout.jobs))
        job = layout.getJob('nova-fork-reproduce-2024.1')
        self.assertEqual('nova-fork-reproduce', job.parent)
        self.assertEqual({'nova-fork-%s' % label
                          for label in zuulconf.TENANT['label']} &
                         set(layout.nodesets), set(layout.nodesets))
        self.assertEqual(sorted(zuulconf.playbooks(PROJECT)),
                         zuulload.playbooks(layout))

    def test_an_unknown_key(self):
        problems = self.broken('jobs.yaml', '    abstract: true\n',
                               '    abstract: true\n    colour: blue\n')
        self.assertIn("extra keys not allowed @ data['colour']", problems[0])
        self.assertIn('The problem appears in the "nova-fork-base" job '
                      'stanza', problems[0])
        self.assertIn('nova-fork/.zuul.d/jobs.yaml@master', problems[0])
        # the jobs below it are not defined either, as Zuul says
        self.assertIn('Job nova-fork-base not defined', problems[1])

    def test_a_wrong_type(self):
        problems = self.broken(
            'lines.yaml', '    timeout: 1800\n', '    timeout: ten\n')
        self.assertIn("expected int for dictionary value @ data['timeout']",
                      problems[0])
        self.assertIn('"nova-fork-export-master" job stanza', problems[0])

    def test_a_parent_not_defined(self):
        problems = self.broken('jobs.yaml', 'parent: nova-fork-base\n',
                               'parent: nova-fork-bsae\n')
        self.assertIn('Job nova-fork-bsae not defined', problems[0])

    def test_a_nodeset_not_defined(self):
        problems = self.broken('lines.yaml', 'nodeset: nova-fork-debian-',
                               'nodeset: nova-fork-debain-')
        self.assertIn('The nodeset "nova-fork-debain-bookworm" was not '
                      'found.', problems[0])

    def test_a_job_the_project_runs_not_defined(self):
        problems = self.broken('project.yaml', '- nova-fork-export-master\n',
                               '- nova-fork-export-mastre\n')
        self.assertIn('Job nova-fork-export-mastre not defined', problems[0])

    def test_the_tenants_names_are_needed(self):
        problems, _ = zuulload.load(self.texts, tenant_text='[]\n')
        self.assertTrue(problems)
        self.assertIn('Job base not defined', '\n'.join(problems))

    def test_a_label_the_tenant_lacks(self):
        problems = self.broken('nodesets.yaml', 'label: debian-bookworm',
                               'label: debian-buster')
        self.assertIn('Label named "debian-buster" is not part of the '
                      'allowed labels', problems[0])

    def test_a_pipeline_the_tenant_lacks(self):
        problems = self.broken('project.yaml', '    periodic:\n',
                               '    nightly:\n')
        self.assertEqual(
            ['the project stanza of review.example.org/nova-fork names the '
             'pipeline nightly, which the tenant does not provide (it '
             'provides check, gate, periodic)'], problems)

    def test_a_playbook_that_does_not_exist(self):
        problems = self.broken('jobs.yaml', 'run: playbooks/nova-fork/run',
                               'run: playbooks/nova-fork/runs')
        self.assertEqual(['a job runs the playbook playbooks/nova-fork/'
                          'runs.yaml, which does not exist'], problems)

    def test_yaml_that_does_not_parse(self):
        problems = self.broken('project.yaml', '    check:\n',
                               '    check:\n   - x: [\n')
        self.assertTrue(problems)
        self.assertIn('Zuul encountered a syntax error', problems[0])


def syntax_check(playbook, action_dir):
    """ansible-playbook --syntax-check of a playbook; (exit, output)."""
    proc = subprocess.run(
        [local.ansible_playbook(), '--syntax-check', '-i', 'localhost,',
         str(playbook)], cwd=str(PROJECT), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
        env=dict(os.environ, ANSIBLE_ACTION_PLUGINS=str(action_dir),
                 ANSIBLE_CONFIG=str(action_dir / 'ansible.cfg'),
                 ANSIBLE_NOCOLOR='1',
                 ANSIBLE_LOCAL_TEMP=str(action_dir),
                 ANSIBLE_REMOTE_TEMP=str(action_dir)))
    return proc.returncode, proc.stdout


class AnsibleSyntaxTest(testtools.TestCase):
    """Every playbook a job runs passes ansible-playbook --syntax-check.

    With Zuul's own zuul_return action, the one action the playbooks use
    that ansible-core lacks, as Zuul's executor has it.
    """

    def setUp(self):
        super().setUp()
        needs('ansible')(self)
        needs('zuul')(self)
        self.action = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        (self.action / 'zuul_return.py').symlink_to(
            local.zuul_return_plugin())
        (self.action / 'ansible.cfg').write_text('[defaults]\n')

    def test_every_playbook(self):
        books = zuulconf.playbooks(PROJECT)
        self.assertTrue(books)
        for book in books:
            code, output = syntax_check(PROJECT / book, self.action)
            self.assertEqual(0, code, '%s: %s' % (book, output))

    def test_the_check_fails_on_a_broken_playbook(self):
        folder = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        for name, text in (
                ('unknown.yaml', '- hosts: all\n  tasks:\n'
                                 '    - no_such_module: {}\n'),
                ('yaml.yaml', '- hosts: all\n  tasks: [\n'),
                ('vars.yaml', '- hosts: all\n  vars_files: [missing.yaml]\n'
                              '  tasks: []\n  colour: blue\n')):
            (folder / name).write_text(text)
            code, output = syntax_check(folder / name, self.action)
            self.assertNotEqual(0, code, name)
