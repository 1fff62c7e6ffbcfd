"""The commands of nova-fork, one module each.

Each module has HELP (its line in ``nova-fork --help``),
``add_arguments(parser)`` and ``VERB_cmd(args, root)``, which returns the
exit code; ``nova_fork.cmd`` wires them into argparse.
"""
