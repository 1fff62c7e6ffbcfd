"""One line on stderr for each step of a long command, and its time.

::

    [   0.0s] fetch: nova 29.4.0, cached in .cache/sdists
    [  95.2s] stestr: build/2024.1-pristine, 21 tests: 9 failed

A command's result (its table, a path) goes to stdout, these lines to
stderr, so ``$(nova-fork build LINE)`` is still the path.  ``nova-fork``
shows them unless ``--quiet``; the tool's functions called from
elsewhere (the tool's tests, tools/benchmark.py) print nothing.
"""

import contextlib
import pathlib
import sys
import time

# on: print; said: the lines of steps that print once a command
_state = {'on': False, 'said': set()}


@contextlib.contextmanager
def shown(on=True):
    """Within the block, print the steps (or not, for --quiet)."""
    saved = dict(_state)
    _state.update(on=on, said=set())
    try:
        yield
    finally:
        _state.update(saved)


def line(seconds, text):
    """A step's line.

    >>> line(12.34, 'stestr: build/2024.1, 21 tests: 9 failed')
    '[  12.3s] stestr: build/2024.1, 21 tests: 9 failed'
    """
    return '[%6.1fs] %s' % (seconds, text)


def say(text, seconds=0.0, once=False):
    """Print a step's line on stderr; once: not again in this command."""
    if not _state['on']:
        return
    if once:
        if text in _state['said']:
            return
        _state['said'].add(text)
    print(line(seconds, text), file=sys.stderr, flush=True)


class Step(object):
    """A step being timed: Step(), then done(text) when it ends."""

    def __init__(self):
        self.start = time.monotonic()

    def done(self, text, once=False):
        say(text, time.monotonic() - self.start, once)


def where(path, root):
    """path relative to the project, as a person would type it.

    >>> where('/p/build/2024.1', '/p'), where('/tmp/x', '/p')
    ('build/2024.1', '/tmp/x')
    """
    path = pathlib.Path(path)
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def tests(statuses):
    """How many tests a run had, and how they ended.

    statuses are subunit's: success, fail, skip, xfail, uxsuccess.

    >>> tests(['success'] * 12 + ['fail'] * 9)
    '21 tests: 9 failed'
    >>> tests(['success', 'skip']), tests(['success', 'xfail'])
    ('2 tests: 1 skipped', '2 tests: all passed')
    >>> tests(['success', 'exists']), tests([])
    ('2 tests: 1 not run', '0 tests')
    """
    statuses = list(statuses)
    if not statuses:
        return '0 tests'
    failed = sum(s in ('fail', 'uxsuccess') for s in statuses)
    skipped = statuses.count('skip')
    passed = sum(s in ('success', 'xfail') for s in statuses)
    other = len(statuses) - failed - skipped - passed
    ended = ['%d failed' % failed] if failed else []
    ended += ['%d skipped' % skipped] if skipped else []
    ended += ['%d not run' % other] if other else []
    return '%d test%s: %s' % (len(statuses), '' if len(statuses) == 1
                              else 's', ', '.join(ended) or 'all passed')
