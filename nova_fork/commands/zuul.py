"""nova-fork zuul: the Zuul configuration, generated from bases.ini."""

from nova_fork.ci import local
from nova_fork.ci import timings
from nova_fork.ci import zuulconf
from nova_fork import config
from nova_fork import errors
from nova_fork import progress

HELP = ('the Zuul jobs of every line (.zuul.d/), generated from bases.ini: '
        'say whether they are up to date, write them, or run one here')


def add_arguments(parser):
    group = parser.add_mutually_exclusive_group()
    group.add_argument('--write', action='store_true',
                       help='write %s/ from bases.ini and %s' % (
                           zuulconf.FOLDER, timings.FILE))
    group.add_argument('--timings', action='store_true',
                       help="write %s from the gate's records "
                            '(build/results/gate/), then %s/' % (
                                timings.FILE, zuulconf.FOLDER))
    group.add_argument('--run', metavar='JOB',
                       help="run the job's playbooks on this machine with "
                            'ansible-playbook -c local and the variables '
                            'Zuul would give them (tox -e zuul-local -- '
                            'JOB)')


def zuul_cmd(args, root):
    if args.run:
        return local.run(root, args.run)
    if args.timings:
        path, lines = timings.write(root, config.load_bases(root))
        measured = sum(len(suites) for suites in lines.values())
        print('zuul: wrote %s: %d measured suite%s of %d line%s' % (
            progress.where(path, root), measured,
            '' if measured == 1 else 's', len(lines),
            '' if len(lines) == 1 else 's'))
    if args.write or args.timings:
        for path in zuulconf.write(root):
            print('zuul: wrote %s' % progress.where(path, root))
        return 0
    found = zuulconf.stale(root)
    if found:
        raise errors.UsageError(
            '%s/ is not what bases.ini and %s give (%s): run nova-fork zuul '
            '--write, and commit it' % (
                zuulconf.FOLDER, timings.FILE,
                ', '.join('%s %s' % pair for pair in found)))
    jobs = zuulconf.jobs(root)
    print('zuul: %s/ is up to date: %d jobs of %d lines' % (
        zuulconf.FOLDER, len(jobs),
        len(config.load_bases(root))))
    return 0
