"""The configuration of .zuul.d/ through Zuul's own loader, offline.

Zuul reads a project's configuration in two passes, and posts on the
review what either finds: its parsers (zuul.configloader: the job,
project, project-template, nodeset, secret... parsers a ParseContext
holds, driven by TenantParser.loadProjectYAML) check each stanza's keys
and types; then the layout (TenantParser._addLayoutItems on a
model.Layout) adds the stanzas and checks what they name: a job's parent
and nodeset, a project's jobs and templates.  Both run here on a tenant
made in memory, with no scheduler, ZooKeeper or network, as a dynamic
layout (the one Zuul makes for a proposed change), over the
configuration and a second, trusted project that stands for the tenant:
it defines the names the configuration takes from the tenant
(zuulconf.TENANT), and only those.  What Zuul leaves to run time is
checked beside it: the pipelines a project stanza names are the
tenant's, and every playbook a job runs exists.  The tenant's
allowed-labels are zuulconf.TENANT's: Zuul refuses any other label.

Zuul itself is imported only here, and only when a check runs: it is
installed in ``tox -e zuul`` (Python 3.11 or newer), not with the tool.
"""

import logging
import pathlib
import re

from nova_fork.ci import yamltext
from nova_fork.ci import zuulconf

PROJECT = 'nova-fork'
TENANT_PROJECT = 'tenant-config'
CONNECTION = 'local'
HOSTNAME = 'review.example.org'


def tenant_yaml():
    """The stanzas that stand for what the tenant defines."""
    jobs = [(None, {'job': {'name': name, 'parent': None,
                            'description': "the tenant's own"}})
            for name in zuulconf.TENANT['job']]
    return yamltext.dump(jobs)


class _Connection(object):
    connection_name = CONNECTION


class _Connections(object):
    """No connection: pipelines, with their triggers, are the tenant's."""

    connections = {}


class _Source(object):
    """What the layout asks of a project's source: its defaults."""

    canonical_hostname = HOSTNAME
    connection = _Connection()

    def getProjectDefaultMergeMode(self, project, valid_modes=None):
        return 'merge-resolve'

    def getProjectDefaultBranch(self, project, tenant):
        return 'master'


def _tenant(model):
    """The tenant, as TenantParser.fromYaml makes it from its settings.

    Its allowed-labels are the labels of zuulconf.TENANT: Zuul refuses a
    nodeset that asks for another.
    """
    tenant = model.Tenant('local')
    tenant.allowed_labels = ['^%s$' % re.escape(label)
                             for label in zuulconf.TENANT['label']]
    tenant.disallowed_labels = None
    tenant.allowed_triggers = tenant.allowed_reporters = None
    tenant.default_base_job = zuulconf.BASE_JOB
    tenant.web_root = None
    source = _Source()
    for name, trusted in ((TENANT_PROJECT, True), (PROJECT, False)):
        tpc = model.TenantProjectConfig(model.Project(name, source))
        tpc.trusted = trusted
        tpc.load_classes = set(['job', 'nodeset', 'secret', 'project',
                                'project-template', 'semaphore', 'queue',
                                'pipeline'])
        tpc.branches = ['master']
        tenant.addTPC(tpc)
    return tenant


def _messages(errors):
    return [error.error for error in errors]


def load(texts, tenant_text=None):
    """Zuul's errors over texts ({file name: YAML}); [] when none.

    Each error is the text Zuul would post on a review.  The parsed
    configuration is returned too, for the checks beside Zuul's.
    """
    from zuul import configloader
    from zuul import model

    logging.getLogger('zuul').addHandler(logging.NullHandler())
    tenant = _tenant(model)
    context = configloader.ParseContext(
        connections=_Connections(), zuul_globals=None, system=None,
        ansible_manager=None)
    parser = configloader.TenantParser(
        connections=_Connections(), zk_client=None, scheduler=None,
        merger=None, keystorage=None, zuul_globals=None, statsd=None,
        unparsed_config_cache=None)
    parsed = model.ParsedConfig()
    sources = [(TENANT_PROJECT, 'zuul.yaml', tenant_text or tenant_yaml())]
    sources += [(PROJECT, '%s/%s' % (zuulconf.FOLDER, name), text)
                for name, text in sorted(texts.items())]
    for project, path, text in sources:
        tpc = tenant.getTPC(project)
        source_context = model.SourceContext(
            tpc.project.canonical_name, project, CONNECTION, 'master', path)
        source_context.trusted = tpc.trusted
        with context.errorContext(source_context=source_context):
            config = parser.loadProjectYAML(text, source_context, context)
        parser.addProjectBranchConfig(context, parsed, tenant, tpc, config,
                                      trusted=tpc.trusted)
    layout = model.Layout(tenant)
    tenant.layout = layout
    for error in context.error_list:
        layout.loading_errors.addError(error)
    context.error_list.clear()
    parser._addLayoutItems(layout, tenant, parsed, context,
                           dynamic_layout=True)
    for error in context.error_list:
        layout.loading_errors.addError(error)
    return _messages(layout.loading_errors.errors), layout


def beside(layout, root):
    """What Zuul leaves to run time: pipelines and playbooks."""
    found = []
    for name, configs in sorted(layout.project_configs.items()):
        for project_config in configs:
            for pipeline in sorted(project_config.pipelines):
                if pipeline not in zuulconf.TENANT['pipeline']:
                    found.append(
                        'the project stanza of %s names the pipeline %s, '
                        'which the tenant does not provide (it provides %s)'
                        % (name, pipeline,
                           ', '.join(zuulconf.TENANT['pipeline'])))
    for path in playbooks(layout):
        if not (pathlib.Path(root) / path).is_file():
            found.append('a job runs the playbook %s, which does not exist'
                         % path)
    return found


def playbooks(layout):
    """The playbooks the project's jobs run, as Zuul parsed them."""
    found = set()
    for jobs in layout.jobs.values():
        for job in jobs:
            source = job.source_context
            if source is None or source.project_name != PROJECT:
                continue
            for playbook in job.all_playbooks:
                found.add(playbook.path)
    return sorted(found)


def check(root, texts=None):
    """Every problem of the configuration: Zuul's, then those beside it.

    texts: {file name: YAML} (default: the files of .zuul.d/).
    """
    if texts is None:
        texts = zuulconf.written(root)
    problems, layout = load(texts)
    return problems + beside(layout, root)
