"""The project's Zuul configuration, generated from bases.ini.

``nova-fork zuul --write`` writes .zuul.d/: an abstract base job (the
tool installed from the checkout, nova's sdists from the node's cache, a
pre-run that provides the line's Python), an abstract job for each kind
(export, reproduce, mutants, and nova's unit and functional suites
through the gate), and for every line of bases.ini one job of each kind,
``nova-fork-KIND-LINE``, with the line in its vars, a nodeset whose
distribution has the line's Python, and a timeout from timings.py.  The
project's stanza runs the export and reproduce of the lines a change
touches in check and gate, and every line's suites and mutants in a
periodic pipeline.  The playbooks (playbooks/nova-fork/) run the tool's
own commands.

Nothing here depends on what is not committed: bases.ini, the commands
of toxenvs.py and .zuul.d/timings.json give the whole configuration.
"""

import pathlib
import re
import textwrap

from nova_fork.ci import timings
from nova_fork.ci import yamltext
from nova_fork import config
from nova_fork.env import chroot
from nova_fork import errors
from nova_fork import toxenvs

FOLDER = pathlib.PurePath('.zuul.d')
PLAYBOOKS = pathlib.PurePath('playbooks', 'nova-fork')
PREFIX = 'nova-fork'

# The names the configuration takes from the tenant it runs in, and does
# not define: its base job, its pipelines, and the labels of its nodes
# (doc/source/zuul.rst).  Checked with Zuul's own loader, these alone are
# allowed to be undefined (nova_fork/ci/zuulload.py).
BASE_JOB = 'base'
CHECK, GATE, PERIODIC = 'check', 'gate', 'periodic'
PIPELINES = (CHECK, GATE, PERIODIC)

# The node a line's jobs run on, by the line's Python: a distribution
# whose own interpreter it is (the runtime's ``path`` provider finds it),
# and the Python the tool itself runs on there (3.9 or newer: focal's
# own is 3.8, so the tool takes focal's python3.9).
NODES = {
    '2.7': ('debian-bullseye', 'python3'),
    '3.8': ('ubuntu-focal', 'python3.9'),
    '3.9': ('debian-bullseye', 'python3'),
    '3.10': ('ubuntu-jammy', 'python3'),
    '3.11': ('debian-bookworm', 'python3'),
    '3.12': ('ubuntu-noble', 'python3'),
    '3.13': ('debian-trixie', 'python3'),
}
LABELS = tuple(sorted({label for label, _ in NODES.values()}))
TENANT = {'job': (BASE_JOB,), 'pipeline': PIPELINES, 'label': LABELS}

# kind: (what it proves, the pipelines that run it)
KINDS = {
    'export': ("the line's format-patch (and quilt) series, checked with "
               'git am (and quilt push) on each of its releases',
               (CHECK, GATE)),
    'reproduce': ('the regression tests fail on the pristine release for '
                  'the bug and pass on the fork',
                  (CHECK, GATE)),
    'mutants': ('leaving out each unit of the fix makes a regression test '
                'fail', (PERIODIC,)),
    'unit': ("nova's unit suite on the fork, through the tree's own "
             "tox.ini; each failure run again on the pristine release",
             (PERIODIC,)),
    'functional': ("nova's functional suite on the fork, through the "
                   "tree's own tox.ini; each failure run again on the "
                   'pristine release', (PERIODIC,)),
}


def header(labels):
    """The comment at the top of each file."""
    return textwrap.fill(
        'Written by nova-fork zuul --write from bases.ini and %s: do not '
        'edit it by hand.  The tenant provides the job %s, the pipelines '
        '%s, and nodes of the labels %s (doc/source/zuul.rst).' % (
            timings.FILE.as_posix(), BASE_JOB, ', '.join(PIPELINES),
            ', '.join(labels)), 76, break_on_hyphens=False)


def text(paragraph):
    """A description, as lines of text."""
    return textwrap.fill(paragraph, 72, break_on_hyphens=False) + '\n'


def version_of(python):
    """'3.11' for python3.11."""
    return python[len('python'):]


def node_of(base):
    """(label, the tool's python) of the node that runs the line's jobs."""
    version = version_of(base.python)
    if version not in NODES:
        raise errors.UsageError(
            'no Zuul node for %s of line %s: add its version to NODES in '
            'nova_fork/ci/zuulconf.py (a label whose distribution has it)'
            % (base.python, base.series))
    return NODES[version]


def nodeset_name(label):
    return '%s-%s' % (PREFIX, label)


def job_name(kind, line=None):
    return '-'.join([PREFIX, kind] + ([line] if line else []))


def packages(base):
    """The distribution's packages a line's node needs, if it lacks them.

    The line's interpreter and its headers (and venv module), what
    building sdists needs, git, quilt, and the tool's own Python with its
    venv module.
    """
    tool = node_of(base)[1]
    wanted = list(chroot.packages(base.python)) + ['quilt']
    wanted += [tool, tool + '-venv'] if tool != 'python3' else \
        ['python3-venv']
    return sorted(set(wanted), key=wanted.index)


def files(base, root):
    """The files a change must touch to run the line's check jobs."""
    def folder(path):
        return '^%s/' % re.escape(
            pathlib.Path(path).relative_to(root).as_posix())
    found = [folder(base.patches)]
    if base.variants:
        found.append(folder(base.variants))
    found += ['^nova/', '^releasenotes/notes/',
              '^%s$' % re.escape(base.lock.relative_to(root).as_posix())]
    return found


def commands(envs, kind, line):
    """The nova-fork commands (argv without nova-fork) of a line's job."""
    if kind in ('unit', 'functional'):
        argvs = [argv + ['--only', kind]
                 for argv in envs['gate-%s' % line][1]]
    else:
        argvs = envs['%s-%s' % (kind, line)][1]
    return [argv[1:] for argv in argvs]


def base_job():
    return {'job': {
        'name': job_name('base'),
        'parent': BASE_JOB,
        'abstract': True,
        'description': text(
            "The tool installed from the checkout in a venv of its own, "
            "nova's sdists taken from the node's cache where it has one, "
            "and the line's Python and test venv (nova-fork venv LINE: "
            "the line's runtime from bases.ini finds the interpreter, "
            "which the nodeset's distribution has), before the job's "
            "commands; its tables, logs and stestr's subunit streams "
            "collected after them."),
        'pre-run': (PLAYBOOKS / 'pre.yaml').as_posix(),
        'post-run': (PLAYBOOKS / 'post.yaml').as_posix(),
        'vars': {
            # a folder of nova-VERSION.tar.gz an image may provide;
            # the tool checks each sdist's sha256 all the same
            'nova_fork_sdist_cache': '/opt/cache/nova-fork/sdists',
            'nova_fork_needs_python': True,
            'nova_fork_collect': [],
        },
    }}


def kind_job(kind):
    what, _ = KINDS[kind]
    job = {
        'name': job_name(kind),
        'parent': job_name('base'),
        'abstract': True,
        'description': text('nova-fork %s of a line: %s.' % (kind, what)),
        'run': (PLAYBOOKS / 'run.yaml').as_posix(),
        'timeout': timings.DEFAULTS[kind],
    }
    if kind == 'export':
        job['vars'] = {'nova_fork_needs_python': False,
                       'nova_fork_collect': ['dist/{{ nova_fork_line }}']}
    return {'job': job}


def line_job(kind, base, root, envs, measured):
    """(comment, the job) of a line."""
    label, tool = node_of(base)
    seconds, why = timings.timeout(kind, measured)
    job = {
        'name': job_name(kind, base.series),
        'parent': job_name(kind),
        'description': 'nova-fork %s %s: nova %s on %s.' % (
            kind, base.series, base.nova, base.python),
        'nodeset': nodeset_name(label),
        'timeout': seconds,
    }
    if set(KINDS[kind][1]) & {CHECK, GATE}:
        job['files'] = files(base, root)
    job['vars'] = {
        'nova_fork_line': base.series,
        'nova_fork_python': base.python,
        'nova_fork_tool_python': tool,
        'nova_fork_packages': packages(base),
        'nova_fork_commands': commands(envs, kind, base.series),
    }
    return 'timeout: ' + why, {'job': job}


def project(bases):
    stanza = {}
    for pipeline in PIPELINES:
        stanza[pipeline] = {'jobs': [
            job_name(kind, line) for line in bases
            for kind, (_, pipelines) in KINDS.items()
            if pipeline in pipelines]}
    return {'project': stanza}


def documents(root):
    """{file name in .zuul.d: [(comment, item)]}: the whole configuration."""
    root = pathlib.Path(root)
    bases = config.load_bases(root)
    envs = toxenvs.envs(root)
    measured = timings.read(root)
    labels = sorted({node_of(base)[0] for base in bases.values()})
    nodesets = [(None, {'nodeset': {
        'name': nodeset_name(label),
        'nodes': [{'name': 'node', 'label': label}]}}) for label in labels]
    jobs = [(None, base_job())] + [(None, kind_job(k)) for k in KINDS]
    lines = [line_job(kind, base, root, envs,
                      measured.get(line, {}).get(kind))
             for line, base in bases.items() for kind in KINDS]
    return {'nodesets.yaml': nodesets, 'jobs.yaml': jobs,
            'lines.yaml': lines, 'project.yaml': [(None, project(bases))]}


def generate(root):
    """{file name in .zuul.d: its text}."""
    labels = sorted({node_of(base)[0] for base in
                     config.load_bases(root).values()})
    return {name: yamltext.dump(items, header(labels))
            for name, items in documents(root).items()}


def jobs(root):
    """{job name: its attributes}, as the configuration defines them."""
    return {item['job']['name']: item['job']
            for items in documents(root).values()
            for _, item in items if 'job' in item}


def written(root):
    """{file name: text} of the YAML files .zuul.d/ holds."""
    folder = pathlib.Path(root) / FOLDER
    return {path.name: path.read_text()
            for path in sorted(folder.glob('*.yaml'))}


def stale(root):
    """The files of .zuul.d/ that differ from what bases.ini gives.

    [(name, why)]: changed, missing, or not generated (Zuul would read it
    too).
    """
    wanted, there = generate(root), written(root)
    found = []
    for name in sorted(set(wanted) | set(there)):
        if name not in there:
            found.append((name, 'missing'))
        elif name not in wanted:
            found.append((name, 'not generated'))
        elif wanted[name] != there[name]:
            found.append((name, 'out of date'))
    return found


def write(root):
    """Write .zuul.d/ from bases.ini; the files written."""
    folder = pathlib.Path(root) / FOLDER
    folder.mkdir(exist_ok=True)
    texts = generate(root)
    for name, text in texts.items():
        (folder / name).write_text(text)
    return [folder / name for name in texts]


def playbooks(root):
    """Every playbook the configuration runs, as the project holds it."""
    found = set()
    for job in jobs(root).values():
        for attr in ('pre-run', 'run', 'post-run'):
            value = job.get(attr, ())
            found.update([value] if isinstance(value, str) else value)
    return sorted(found)
