"""nova-fork reproduce LINE: the regression tests catch the bug."""

from nova_fork.commands import options
from nova_fork import errors
from nova_fork.proof import prove

HELP = ('show that the regression tests fail on the pristine base for the '
        'bug')


def add_arguments(parser):
    options.line_options(parser)


def prove_table(args, root, problems_of, mutants):
    """Run the table's columns, print it and its problems; exit code."""
    base = options.base(args, root)
    columns, rows, _ = prove.table(base, mutants)
    print(prove.render(columns, rows))
    problems = problems_of(base, columns, rows)
    for problem in problems:
        print('problem: %s' % problem)
    if problems:
        raise errors.TestFailure('%s %s: %d problem(s), see above' % (
            args.command, base.series, len(problems)))
    print('%s %s: ok' % (args.command, base.series))
    return 0


def reproduce_cmd(args, root):
    return prove_table(args, root, lambda base, columns, rows:
                       prove.reproduce_problems(base, rows,
                                                prove.lacking(base)),
                       mutants=False)
