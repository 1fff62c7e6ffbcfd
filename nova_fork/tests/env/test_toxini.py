import testtools

from nova_fork.env import toxini

# The settings that decide, as the lines' tox.ini files have them.
ROCKY = '''[tox]
minversion = 2.1
envlist = py{27,35},functional,pep8

[testenv]
basepython = python3.5
whitelist_externals =
  bash
  env
install_command = pip install -c{env:UPPER_CONSTRAINTS_FILE:https://x} {opts}
passenv =
  OS_DEBUG GENERATE_HASHES
# a comment, then a setting
commands =
  find . -type f -name "*.pyc" -delete

[testenv:py27]
basepython = python2.7
'''

USSURI = '''[tox]
minversion = 3.2.0
envlist = py37,functional,pep8
requires = virtualenv<20.8

[testenv]
basepython = python3
whitelist_externals =
  bash
deps =
  -c{env:TOX_CONSTRAINTS_FILE:https://x}
passenv =
  OS_DEBUG GENERATE_HASHES
'''

YOGA = '''[tox]
minversion = 3.18.0
envlist = py39,functional,pep8

[testenv]
allowlist_externals =
  bash
deps =
  -c{env:TOX_CONSTRAINTS_FILE:https://x}
passenv =
  OS_DEBUG GENERATE_HASHES
'''

ZED = '''[tox]
minversion = 3.18.0
envlist = py39,functional,pep8

[testenv]
allowlist_externals =
  bash
passenv =
  OS_DEBUG
  GENERATE_HASHES
# NOTE: a comment among the names
  PYTHONOPTIMIZE

[testenv:functional{,-py38,-py39,-py310}]
passenv =
  {[testenv]passenv}
'''

MASTER = '''[tox]
minversion = 4.28.0
envlist = py3,functional,pep8

[testenv]
pass_env = OS_DEBUG, GENERATE_HASHES

[testenv:{unit,py3,py310,py311,py312,py313,py314}]
'''


class Tox3Test(testtools.TestCase):

    def test_tox3_era(self):
        self.assertEqual(
            ['whitelist_externals in [testenv]',
             "passenv 'OS_DEBUG GENERATE_HASHES' in [testenv]"],
            toxini.tox3_reasons(ROCKY))
        self.assertEqual(2, len(toxini.tox3_reasons(USSURI)))
        # yoga has allowlist_externals: its passenv alone stops tox 4
        self.assertEqual(["passenv 'OS_DEBUG GENERATE_HASHES' in [testenv]"],
                         toxini.tox3_reasons(YOGA))

    def test_tox4_reads_it(self):
        for text in (ZED, MASTER, ''):
            self.assertEqual([], toxini.tox3_reasons(text))

    def test_unreadable_says_nothing(self):
        self.assertEqual([], toxini.tox3_reasons('no section\n'))


class EnvTest(testtools.TestCase):

    def test_env_names(self):
        self.assertEqual({'py27', 'py35', 'functional', 'pep8'},
                         toxini.env_names(ROCKY))
        self.assertEqual({'py39', 'functional', 'functional-py38',
                          'functional-py39', 'functional-py310', 'pep8'},
                         toxini.env_names(ZED))
        self.assertIn('py311', toxini.env_names(MASTER))

    def test_unit_env(self):
        self.assertEqual('py27', toxini.unit_env(ROCKY, (2, 7)))
        # ussuri names py37, the line runs on 3.8: tox's own py38
        self.assertEqual('py38', toxini.unit_env(USSURI, (3, 8)))
        self.assertEqual('py38', toxini.unit_env(YOGA, (3, 8)))
        self.assertEqual('py39', toxini.unit_env(ZED, (3, 9)))
        self.assertEqual('py311', toxini.unit_env(MASTER, (3, 11)))
        # 2023.1: py3 and functional-py310 named, not py310
        self.assertEqual('py3', toxini.unit_env(
            '[tox]\nenvlist = py3,functional\n'
            '[testenv:functional{,-py38,-py310}]\n', (3, 10)))
        self.assertEqual('py27', toxini.unit_env(MASTER, (2, 7)))

    def test_requires(self):
        self.assertEqual(['virtualenv<20.8'], toxini.requires(USSURI))
        self.assertEqual([], toxini.requires(ROCKY))

    def test_constraint_variables(self):
        self.assertEqual(['UPPER_CONSTRAINTS_FILE'],
                         toxini.constraint_variables(ROCKY))
        self.assertEqual(['TOX_CONSTRAINTS_FILE'],
                         toxini.constraint_variables(YOGA))
        self.assertEqual(['TOX_CONSTRAINTS_FILE'],
                         toxini.constraint_variables(MASTER))
