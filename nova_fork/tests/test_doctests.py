import doctest

from nova_fork import config
from nova_fork import detect


def load_tests(loader, tests, pattern):
    tests.addTests(doctest.DocTestSuite(config))
    tests.addTests(doctest.DocTestSuite(detect))
    return tests
