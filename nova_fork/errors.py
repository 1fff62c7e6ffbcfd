"""Errors that end a command with one line for a person to act on."""


class ForkError(Exception):
    """Base of every error the tool reports without a traceback.

    The message says what went wrong and, where there is one, what to do
    next.  ``main`` prints it on one line and exits with ``exit_code``,
    2 or more (``check`` exits 1 for a release that needs the fix).
    """

    exit_code = 2


class UsageError(ForkError):
    exit_code = 2


class UnknownSeries(UsageError):
    pass


class DirtyCheckout(UsageError):
    """A table of the docs asked for from a checkout with changes.

    The tables under doc/source/generated/ name the project's commit they
    were measured at; a checkout whose tracked files differ from it has
    no such commit.
    """


class FetchError(ForkError):
    exit_code = 3


class HashMismatch(ForkError):
    exit_code = 4


class PatchError(ForkError):
    exit_code = 5


class AlreadyFixed(ForkError):
    exit_code = 6


class TestFailure(ForkError):
    exit_code = 7


class PackageError(ForkError):
    """A tarball that could not be built, or is not what it must be."""

    exit_code = 8
