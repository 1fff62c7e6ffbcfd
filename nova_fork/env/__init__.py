"""Where and with what a line's commands run.

runtime picks the interpreter (the host's PATH, pyenv, or a Debian root
that chroot makes), venv installs the test venv from the line's lock,
runner runs stestr and flake8 in a tree, novatox the tree's own tox.ini.
"""
