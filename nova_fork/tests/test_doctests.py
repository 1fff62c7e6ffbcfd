"""The doctests of every module of the tool, found by walking the package.

A new module's doctests run with no edit here.  Not collected: the tests
themselves, __main__ (importing it runs the tool) and scripts/ (run by a
line's interpreter, not imported).
"""

import doctest
import importlib
import pkgutil
import unittest

import nova_fork


def modules():
    """The dotted names of the tool's modules, in order."""
    for info in pkgutil.walk_packages(nova_fork.__path__, 'nova_fork.'):
        if info.name == 'nova_fork.__main__' or \
                info.name.startswith('nova_fork.tests'):
            continue
        yield info.name


def load_tests(loader, tests, pattern):
    for name in sorted(modules()):
        tests.addTests(doctest.DocTestSuite(importlib.import_module(name)))
    return tests


class ModulesTest(unittest.TestCase):

    def test_walks_the_sub_packages(self):
        found = set(modules())
        self.assertIn('nova_fork.units', found)
        self.assertIn('nova_fork.tree.build', found)
        self.assertNotIn('nova_fork.__main__', found)
        self.assertFalse([name for name in found if '.tests' in name])
