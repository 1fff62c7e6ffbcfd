"""nova-fork mutants LINE: leaving out each unit makes a test fail."""

from nova_fork.commands import options
from nova_fork.commands import reproduce
from nova_fork.proof import prove

HELP = ('show that leaving out each unit of the fix makes a regression test '
        'fail')


def add_arguments(parser):
    options.line_options(parser)


def mutants_cmd(args, root):
    return reproduce.prove_table(args, root, prove.mutant_problems,
                                 mutants=True)
