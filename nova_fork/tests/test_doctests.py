import doctest

from nova_fork import archive
from nova_fork import build
from nova_fork import chroot
from nova_fork import config
from nova_fork import debian
from nova_fork import debstack
from nova_fork import detect
from nova_fork import export
from nova_fork import gate
from nova_fork import novatox
from nova_fork import prove
from nova_fork import referee
from nova_fork import review
from nova_fork import runtime
from nova_fork import sdist
from nova_fork import units


def load_tests(loader, tests, pattern):
    tests.addTests(doctest.DocTestSuite(archive))
    tests.addTests(doctest.DocTestSuite(build))
    tests.addTests(doctest.DocTestSuite(chroot))
    tests.addTests(doctest.DocTestSuite(config))
    tests.addTests(doctest.DocTestSuite(debian))
    tests.addTests(doctest.DocTestSuite(debstack))
    tests.addTests(doctest.DocTestSuite(detect))
    tests.addTests(doctest.DocTestSuite(export))
    tests.addTests(doctest.DocTestSuite(gate))
    tests.addTests(doctest.DocTestSuite(novatox))
    tests.addTests(doctest.DocTestSuite(prove))
    tests.addTests(doctest.DocTestSuite(referee))
    tests.addTests(doctest.DocTestSuite(review))
    tests.addTests(doctest.DocTestSuite(runtime))
    tests.addTests(doctest.DocTestSuite(sdist))
    tests.addTests(doctest.DocTestSuite(units))
    return tests
