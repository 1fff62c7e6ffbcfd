"""The pinned bases (bases.ini) and their patch series (series files)."""

import configparser
import dataclasses
import os
import pathlib

from nova_fork import chroot
from nova_fork import errors

BASES_FILE = 'bases.ini'
# The providers of a base's interpreter (runtime.py), and the default.
RUNTIMES = ('path', 'pyenv') + tuple('debian:%s' % s for s in chroot.SUITES)
DEFAULT_RUNTIME = ('path', 'pyenv')


@dataclasses.dataclass(frozen=True)
class Commit:
    """One entry of a series: a patch, or a message for plain new files."""

    number: int
    name: str
    path: pathlib.Path
    files: tuple
    sources: tuple = ()
    needs: tuple = ()

    @property
    def is_patch(self):
        return self.name.endswith('.patch')

    @property
    def is_fix(self):
        """True when the commit changes upstream code (a patch)."""
        return self.is_patch


@dataclasses.dataclass(frozen=True)
class Base:
    series: str
    nova: str
    sha256: str
    python: str
    placement: str
    lock: pathlib.Path
    patches: pathlib.Path
    regression: tuple
    affected: str
    tests: tuple
    root: pathlib.Path
    unit_tests: tuple = ()
    lock_extra: tuple = ()
    releases: tuple = ()
    default_nova: str = ''
    default_sha256: str = ''
    quilt: bool = False
    backport_of: str = ''
    setenv: tuple = ()
    # where the interpreter comes from, in the order to try: words among
    # path, pyenv and debian:SUITE (see runtime.py)
    runtime: tuple = DEFAULT_RUNTIME

    @property
    def label(self):
        """The series, or SERIES-VERSION for another release of it."""
        if self.default_nova and self.nova != self.default_nova:
            return '%s-%s' % (self.series, self.nova)
        return self.series

    def for_release(self, version):
        """The same series on another release it lists in ``releases``."""
        if version is None or version == self.nova:
            return self
        known = dict(self.releases)
        known[self.default_nova] = self.default_sha256
        if version not in known:
            raise errors.UsageError(
                'series %s is not set up for nova %s; its releases are %s '
                '(add "VERSION SHA256" to its releases in %s)' % (
                    self.series, version,
                    ', '.join([self.default_nova] + sorted(
                        v for v in known if v != self.default_nova)),
                    BASES_FILE))
        return dataclasses.replace(self, nova=version, sha256=known[version])

    def commits(self):
        return read_series(self.patches / 'series', self.root)


def find_root(start=None):
    """Return the project folder: the nearest one holding bases.ini."""
    env = os.environ.get('NOVA_FORK_ROOT')
    if env:
        return pathlib.Path(env).resolve()
    here = pathlib.Path(start or os.getcwd()).resolve()
    for folder in [here] + list(here.parents):
        if (folder / BASES_FILE).is_file():
            return folder
    raise errors.UsageError(
        'no %s found in %s or above; run nova-fork from a checkout of the '
        'fork project or set NOVA_FORK_ROOT' % (BASES_FILE, here))


def load_bases(root):
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(root / BASES_FILE)
    bases = {}
    for series in parser.sections():
        sec = parser[series]
        try:
            bases[series] = Base(
                series=series,
                nova=sec['nova'],
                sha256=sec['sha256'].lower(),
                python=sec['python'],
                placement=sec.get('placement', ''),
                lock=root / sec['lock'],
                patches=root / sec['patches'],
                regression=tuple(sec['regression'].split()),
                # a regular expression, which may be folded over lines
                affected=''.join(sec.get('affected', '').split()),
                tests=tuple(sec.get('tests', '').split()),
                root=root,
                unit_tests=tuple(sec.get('unit_tests', '').split()),
                lock_extra=tuple(sec.get('lock_extra', '').split()),
                releases=_pairs(sec.get('releases', '')),
                default_nova=sec['nova'],
                default_sha256=sec['sha256'].lower(),
                quilt=sec.getboolean('quilt', False),
                backport_of=sec.get('backport_of', ''),
                setenv=_setenv(series, sec.get('setenv', '')),
                runtime=_runtime(series, sec.get('runtime', '')),
            )
        except KeyError as exc:
            raise errors.UsageError(
                '%s: series %s has no %s option' % (
                    root / BASES_FILE, series, exc.args[0]))
    return bases


def _pairs(text):
    """'18.2.2 abc...' lines as ((version, sha256), ...)."""
    pairs = []
    for line in text.splitlines():
        if line.strip():
            version, sha256 = line.split()
            pairs.append((version, sha256.lower()))
    return tuple(pairs)


def _setenv(series, text):
    """'NAME=VALUE' words as ((name, value), ...), as tox's setenv.

    >>> _setenv('s', 'A=1\\n B=x=y')
    (('A', '1'), ('B', 'x=y'))
    """
    pairs = []
    for word in text.split():
        name, sep, value = word.partition('=')
        if not sep or not name:
            raise errors.UsageError(
                '%s: series %s: setenv takes NAME=VALUE words, not %r' % (
                    BASES_FILE, series, word))
        pairs.append((name, value))
    return tuple(pairs)


def _runtime(series, text):
    """The providers of a base's interpreter, in order; path pyenv if none.

    >>> _runtime('s', 'path debian:bullseye')
    ('path', 'debian:bullseye')
    >>> _runtime('s', '')
    ('path', 'pyenv')
    """
    words = tuple(text.split())
    for word in words:
        if word not in RUNTIMES:
            raise errors.UsageError(
                '%s: series %s: runtime %r is not one of %s' % (
                    BASES_FILE, series, word, ', '.join(RUNTIMES)))
    if len(set(words)) != len(words):
        raise errors.UsageError(
            '%s: series %s: runtime lists a provider twice: %s' % (
                BASES_FILE, series, text.strip()))
    return words or DEFAULT_RUNTIME


def get_base(root, series):
    bases = load_bases(root)
    if series not in bases:
        raise errors.UnknownSeries(
            'unknown series %r; known series: %s (see %s)' % (
                series, ', '.join(sorted(bases)) or 'none', BASES_FILE))
    return bases[series]


def parse_series(text):
    """Parse a series file into (name, files, needs) triples.

    One commit a line, applied in order: a patch file name, or a ``.msg``
    file holding the commit message for plain new files.  Paths after the
    name are new files of the project, added to that commit; ``needs=N``
    says the commit builds on commit N of the series (so a tree without N
    cannot have it either).  Blank lines and ``#`` comments are ignored.

    >>> parse_series('# fixes\\n0001-a.patch\\n\\n0002-b.msg x.py y.py\\n'
    ...              '0003-c.patch needs=1 z.yaml\\n')
    ... # doctest: +NORMALIZE_WHITESPACE
    [('0001-a.patch', (), ()), ('0002-b.msg', ('x.py', 'y.py'), ()),
     ('0003-c.patch', ('z.yaml',), (1,))]
    """
    entries = []
    for line in text.splitlines():
        line = line.split('#', 1)[0].strip()
        if line:
            name, *words = line.split()
            needs = tuple(w[len('needs='):] for w in words
                          if w.startswith('needs='))
            needs = tuple(int(n) if n.isdigit() else n for n in needs)
            files = tuple(w for w in words if not w.startswith('needs='))
            entries.append((name, files, needs))
    return entries


def read_series(path, root):
    if not path.is_file():
        raise errors.UsageError(
            'no series file at %s: list the patches there, one a line' % path)
    commits = []
    for number, (name, files, needs) in enumerate(
            parse_series(path.read_text()), start=1):
        if not (name.endswith('.patch') or name.endswith('.msg')):
            raise errors.UsageError(
                '%s: entry %d (%s) is neither a .patch nor a .msg file' % (
                    path, number, name))
        if not name.endswith('.patch') and not files:
            raise errors.UsageError(
                '%s: entry %d (%s) is a message with no files' % (
                    path, number, name))
        for need in needs:
            if not (isinstance(need, int) and 0 < need < number):
                raise errors.UsageError(
                    '%s: entry %d (%s) says needs=%s; it must name an '
                    'earlier entry by its number' % (
                        path, number, name, need))
        sources = tuple(source_of(path.parent, root, f) for f in files)
        for item in [path.parent / name] + list(sources):
            if not item.is_file():
                raise errors.UsageError(
                    '%s: entry %d names %s, which does not exist' % (
                        path, number, item))
        commits.append(Commit(number, name, path.parent / name, files,
                              sources, needs))
    return commits


def source_of(patches, root, name):
    """Where the project keeps new file NAME for a series.

    A series whose test infrastructure differs keeps its own variant under
    its patches folder, in files/NAME; otherwise the file at NAME in the
    project is used.
    """
    variant = patches / 'files' / name
    return variant if variant.is_file() else root / name
