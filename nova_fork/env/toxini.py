"""What a fork tree's own tox.ini needs, read from the file itself.

A line's tox.ini is its release's, as nova's developers ran it then:

* which tox reads it: tox 4 changed the meaning of two settings that
  nova's tox.ini files used up to yoga (25.x).  ``passenv`` with several
  names on one line separated by spaces (``OS_DEBUG GENERATE_HASHES``,
  up to yoga) stops tox 4 at once ("pass_env values cannot contain
  whitespace"), and ``whitelist_externals`` (up to wallaby), which tox 4
  no longer knows, leaves every ``bash``, ``env`` and ``find`` command
  refused.  A tox.ini with either is run with tox 3 (``tox3_reasons``);
  the others with tox 4.
* which environment runs the unit suite on the line's Python
  (``unit_env``): ``py27`` on Python 2.7; on Python 3 ``pyXY`` where the
  tox.ini names it, else ``py3`` where it names that, else ``pyXY``,
  which tox makes from ``[testenv]`` for any tox.ini.
* which variable it reads its constraints from
  (``constraint_variables``): ``UPPER_CONSTRAINTS_FILE`` (rocky to
  train), ``TOX_CONSTRAINTS_FILE`` (ussuri on).
* what tox itself must have (``requires``: ussuri's ``virtualenv<20.8``,
  2024.2's ``virtualenv<20.37.0``).
"""

import configparser
import pathlib
import re

NAME = 'tox.ini'
TOX_CONSTRAINTS = 'TOX_CONSTRAINTS_FILE'
UPPER_CONSTRAINTS = 'UPPER_CONSTRAINTS_FILE'


def parse(text):
    """The tox.ini as a RawConfigParser (comments and {} left alone)."""
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        # tox's own reader is laxer; what cannot be read here says nothing
        pass
    return parser


def read(tree):
    """The text of the tree's tox.ini ('' when it has none)."""
    path = pathlib.Path(tree) / NAME
    return path.read_text() if path.is_file() else ''


def tox3_reasons(text):
    """Why tox 4 does not read the tox.ini as written; [] when it does.

    >>> tox3_reasons('[testenv]\\npassenv =\\n  OS_DEBUG\\n  HOME, USER\\n')
    []
    >>> tox3_reasons('[testenv]\\npassenv = OS_DEBUG GENERATE_HASHES\\n')
    ["passenv 'OS_DEBUG GENERATE_HASHES' in [testenv]"]
    >>> tox3_reasons('[testenv:x]\\nwhitelist_externals = bash\\n')
    ['whitelist_externals in [testenv:x]']
    """
    parser = parse(text)
    reasons = []
    for section in parser.sections():
        for key, value in parser.items(section):
            if key == 'whitelist_externals':
                reasons.append('whitelist_externals in [%s]' % section)
            elif key in ('passenv', 'pass_env'):
                for line in value.splitlines():
                    if any(len(part.split()) > 1 for part in line.split(',')):
                        reasons.append('passenv %r in [%s]' % (
                            line.strip(), section))
    return reasons


def _expand(name):
    """The names a generative name stands for.

    >>> _expand('py{27,35}'), _expand('functional{,-py38}')
    (['py27', 'py35'], ['functional', 'functional-py38'])
    """
    match = re.search(r'\{([^{}]*)\}', name)
    if not match:
        return [name]
    return [expanded for part in match.group(1).split(',')
            for expanded in _expand(name[:match.start()] + part.strip() +
                                    name[match.end():])]


def env_names(text):
    """The environments the tox.ini names: its envlist and sections."""
    parser = parse(text)
    names = set()
    if parser.has_option('tox', 'envlist'):
        for word in re.split(r',(?![^{]*\})|\s+',
                             parser.get('tox', 'envlist')):
            if word.strip():
                names.update(_expand(word.strip()))
    for section in parser.sections():
        if section.startswith('testenv:'):
            names.update(_expand(section[len('testenv:'):]))
    return names


def unit_env(text, version):
    """The environment of the unit suite on Python version (major, minor).

    >>> unit_env('[tox]\\nenvlist = py{27,35},functional\\n', (2, 7))
    'py27'
    >>> unit_env('[tox]\\nenvlist = py37,functional\\n', (3, 8))
    'py38'
    >>> unit_env('[tox]\\nenvlist = py39,functional\\n', (3, 9))
    'py39'
    >>> unit_env('[tox]\\nenvlist = py3,functional\\n', (3, 10))
    'py3'
    """
    exact = 'py%d%d' % tuple(version[:2])
    names = env_names(text)
    if exact in names or version[0] < 3 or 'py3' not in names:
        return exact
    return 'py3'


def constraint_variables(text):
    """The variables the tox.ini takes its constraints file from.

    ``TOX_CONSTRAINTS_FILE`` when it names neither.

    >>> constraint_variables('-c{env:UPPER_CONSTRAINTS_FILE:https://x}')
    ['UPPER_CONSTRAINTS_FILE']
    """
    found = [name for name in (UPPER_CONSTRAINTS, TOX_CONSTRAINTS)
             if name in text]
    return found or [TOX_CONSTRAINTS]


def requires(text):
    """The requirements [tox] requires of tox's own environment.

    >>> requires('[tox]\\nminversion = 3.2.0\\nrequires = virtualenv<20.8\\n')
    ['virtualenv<20.8']
    >>> requires('[tox]\\nenvlist = py3\\n')
    []
    """
    parser = parse(text)
    if not parser.has_option('tox', 'requires'):
        return []
    return [line.strip() for line in parser.get('tox', 'requires')
            .splitlines() if line.strip()]
