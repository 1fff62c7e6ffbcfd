import doctest

from nova_fork import build
from nova_fork import config
from nova_fork import detect
from nova_fork import prove


def load_tests(loader, tests, pattern):
    tests.addTests(doctest.DocTestSuite(build))
    tests.addTests(doctest.DocTestSuite(config))
    tests.addTests(doctest.DocTestSuite(detect))
    tests.addTests(doctest.DocTestSuite(prove))
    return tests
