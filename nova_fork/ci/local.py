"""One job of the Zuul configuration, run on this machine.

``nova-fork zuul --run JOB`` (``tox -e zuul-local -- JOB``) runs the
job's playbooks as Zuul's executor would, in its order (the pre-run
playbooks of its parents first, its run playbook, then its post-run
playbooks, the job's own first; post-run also after a failure), each with
``ansible-playbook -c local`` and the variables Zuul would give it: the
job's vars, merged down its parents as Zuul merges them, and a ``zuul``
variable with the keys the playbooks read.  Two things stand in for what
a Zuul node has: the project's src_dir is this checkout itself, so the
tool's caches under build/ serve as a node's would after a first run,
and the tenant's base job, whose playbooks are the tenant's, is left
out.  Zuul's own zuul_return action (from the zuul package installed
beside ansible-core) records the artifacts the job names.  Everything of
the run is under build/zuul-local/JOB/: each playbook's log, the files
the post-run copied to the executor's log folder (logs/) and Zuul's
results.json.
"""

import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys
import uuid

from nova_fork.ci import zuulconf
from nova_fork import errors
from nova_fork import progress

FOLDER = pathlib.PurePath('build', 'zuul-local')
# the executor's folder of a job's files that are kept (zuul.executor)
LOGS = 'logs'
WORK = 'work'


def merged(jobs, name):
    """The job as Zuul freezes it: (its attributes, its playbooks).

    Playbooks: [(phase, path)], in the order they run; the tenant's base
    job, which the configuration does not define, adds none here.

    >>> jobs = {'a': {'name': 'a', 'parent': 'base', 'pre-run': 'p.yaml',
    ...               'post-run': 'q.yaml', 'vars': {'x': 1, 'd': {'k': 1}}},
    ...         'b': {'name': 'b', 'parent': 'a', 'run': 'r.yaml',
    ...               'vars': {'y': 2, 'd': {'l': 2}}, 'timeout': 60}}
    >>> attrs, books = merged(jobs, 'b')
    >>> attrs['vars'], attrs['timeout'], books
    ... # doctest: +NORMALIZE_WHITESPACE
    ({'x': 1, 'd': {'k': 1, 'l': 2}, 'y': 2}, 60,
     [('pre', 'p.yaml'), ('run', 'r.yaml'), ('post', 'q.yaml')])
    """
    if name not in jobs:
        raise errors.UsageError(
            'no job %s in %s/: its jobs are nova-fork-KIND-LINE, KIND one '
            'of %s (nova-fork lines)' % (name, zuulconf.FOLDER,
                                         ', '.join(zuulconf.KINDS)))
    chain = []
    while name in jobs:
        chain.insert(0, jobs[name])
        name = jobs[name].get('parent')
    attrs, pre, post, run = {'vars': {}}, [], [], None
    for job in chain:
        for key, value in job.items():
            if key == 'vars':
                attrs['vars'] = _merge(attrs['vars'], value)
            elif key not in ('pre-run', 'post-run', 'run'):
                attrs[key] = value
        pre += _listed(job.get('pre-run'))
        post = _listed(job.get('post-run')) + post
        run = _listed(job.get('run'))[-1:] or run
    books = [('pre', p) for p in pre] + [('run', p) for p in run or ()] + \
        [('post', p) for p in post]
    return attrs, books


def _listed(value):
    if not value:
        return []
    return [value] if isinstance(value, str) else list(value)


def _merge(parent, child):
    """Zuul's merge of vars: a child's mapping goes into its parent's."""
    result = dict(parent)
    for key, value in child.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = _merge(result[key], value)
        else:
            result[key] = value
    return result


def zuul_vars(root, name, attrs, jobdir):
    """The ``zuul`` variable of the job, as far as its playbooks read it."""
    kind = name[len(zuulconf.PREFIX) + 1:].split('-')[0]
    executor = pathlib.Path(jobdir)
    return {
        'job': name,
        'build': uuid.uuid4().hex,
        'buildset': uuid.uuid4().hex,
        'pipeline': zuulconf.KINDS.get(kind, ('', (zuulconf.CHECK,)))[1][0],
        'tenant': 'local',
        'voting': True,
        'attempts': 1,
        'timeout': attrs.get('timeout'),
        'branch': 'main',
        'ref': 'refs/heads/main',
        'project': {
            'name': 'nova-fork',
            'short_name': 'nova-fork',
            'canonical_hostname': 'localhost',
            'canonical_name': 'localhost/nova-fork',
            # the checkout itself, in place of the node's copy of it
            'src_dir': str(root),
        },
        'executor': {
            'hostname': 'localhost',
            'src_root': str(executor / WORK / 'src'),
            'log_root': str(executor / LOGS),
            'work_root': str(executor / WORK),
            'inventory_file': str(executor / 'inventory.json'),
            'result_data_file': str(executor / WORK / 'results.json'),
        },
    }


def inventory(attrs, zuul):
    """The inventory Zuul writes: the nodeset's node, the vars for all."""
    return {'all': {
        'hosts': {'node': {'ansible_connection': 'local',
                           'ansible_python_interpreter': sys.executable,
                           'nodepool': {'label': attrs.get('nodeset')}}},
        'vars': dict(attrs['vars'], zuul=zuul)}}


def zuul_return_plugin():
    """Zuul's own zuul_return action, from the installed zuul package."""
    spec = importlib.util.find_spec('zuul')
    if spec is None or not spec.submodule_search_locations:
        return None
    plugin = pathlib.Path(list(spec.submodule_search_locations)[0]) / \
        'ansible' / 'base' / 'action' / 'zuul_return.py'
    return plugin if plugin.is_file() else None


def ansible_playbook():
    """ansible-playbook beside this Python, or on PATH."""
    beside = pathlib.Path(sys.executable).parent / 'ansible-playbook'
    return str(beside) if beside.is_file() else \
        shutil.which('ansible-playbook')


def prepare(jobdir):
    """The job's folder, fresh, with Zuul's zuul_return as its only action.

    Returns the environment ansible-playbook runs in.
    """
    plugin, playbook = zuul_return_plugin(), ansible_playbook()
    if not plugin or not playbook:
        raise errors.UsageError(
            'running a Zuul job here needs ansible-core and zuul (for its '
            'zuul_return action): run tox -e zuul-local -- JOB, which '
            'installs both, pinned (tools/zuul-requirements.txt)')
    shutil.rmtree(jobdir, ignore_errors=True)
    for sub in (LOGS, WORK, 'action', 'tmp'):
        (jobdir / sub).mkdir(parents=True)
    (jobdir / 'action' / 'zuul_return.py').symlink_to(plugin)
    # as the executor does: zuul_return adds to it
    (jobdir / WORK / 'results.json').write_text('')
    (jobdir / 'ansible.cfg').write_text('[defaults]\n')
    return playbook, dict(
        os.environ,
        ZUUL_JOBDIR=str(jobdir),
        ANSIBLE_CONFIG=str(jobdir / 'ansible.cfg'),
        ANSIBLE_ACTION_PLUGINS=str(jobdir / 'action'),
        ANSIBLE_LOCAL_TEMP=str(jobdir / 'tmp'),
        ANSIBLE_REMOTE_TEMP=str(jobdir / 'tmp'),
        ANSIBLE_NOCOLOR='1',
        ANSIBLE_RETRY_FILES_ENABLED='0')


def run(root, name):
    """Run the job's playbooks here; 0, or TestFailure naming the one."""
    root = pathlib.Path(root)
    attrs, books = merged(zuulconf.jobs(root), name)
    jobdir = root / FOLDER / name
    playbook, env = prepare(jobdir)
    zuul = zuul_vars(root, name, attrs, jobdir)
    hosts = jobdir / 'inventory.json'
    hosts.write_text(json.dumps(inventory(attrs, zuul), indent=2))
    failed = None
    for phase, book in books:
        if failed and phase != 'post':
            continue
        log = jobdir / ('ansible-%s-%s.log' % (
            phase, pathlib.PurePath(book).stem))
        step = progress.Step()
        with open(log, 'w') as out:
            proc = subprocess.run(
                [playbook, '-c', 'local', '-i', str(hosts),
                 str(root / book)], cwd=str(root), env=env,
                stdout=out, stderr=subprocess.STDOUT)
        step.done('zuul: %s %s %s (%s)' % (
            phase, book, 'ok' if proc.returncode == 0 else
            'FAILED, exit %d' % proc.returncode, progress.where(log, root)))
        if proc.returncode and not failed:
            failed = (book, log)
    report(root, jobdir)
    if failed:
        raise errors.TestFailure('%s: %s failed; its log is %s' % (
            name, failed[0], progress.where(failed[1], root)))
    return 0


def report(root, jobdir):
    """Print the tables the job's post-run kept, and its artifacts."""
    logs = jobdir / LOGS
    for table in sorted(logs.rglob('table.txt')):
        print(table.read_text(), end='')
    results = jobdir / WORK / 'results.json'
    text = results.read_text() if results.is_file() else ''
    data = json.loads(text)['data'] if text.strip() else {}
    for artifact in data.get('zuul', {}).get('artifacts', []):
        progress.say('zuul: artifact %s: %s' % (
            artifact['name'], progress.where(logs / artifact['url'], root)))
