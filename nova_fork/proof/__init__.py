"""The proofs and their tables.

prove: reproduce and mutants of a line; matrix: of every line; capture
and referee: real libvirt judges the guests of the regression tests;
gate: nova's own gate through the tree's tox.ini.
"""
