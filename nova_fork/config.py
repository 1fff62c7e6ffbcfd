"""What bases.ini says: the bug, its fix units, the lines and their series.

bases.ini has one section a line (an OpenStack series on a pinned nova
release), plus three of the project's own:

* ``[bug]``: the bug the fork fixes, and the failure texts that are its;
* ``[unit NAME]``: one unit of the fix, a behaviour a release has or lacks,
  and how to tell from the release's code;
* ``[series]``: nova's major versions and the OpenStack series they are.
"""

import configparser
import dataclasses
import os
import pathlib

from nova_fork import errors
from nova_fork import facts

BASES_FILE = 'bases.ini'
BUG_SECTION = 'bug'
SERIES_SECTION = 'series'
UNIT_PREFIX = 'unit '
# the word of a series entry that marks it for Gerrit (nova-fork review):
# review=CHANGE for one of the line's changes, bare for the first, "move"
REVIEW = 'review'
DEFAULT_CHANGE = 'move'
# What a patch with no unit may change besides nova's tests: its
# requirements (a floor a line needs, such as yoga's oslo.concurrency).
REQUIREMENTS = ('requirements.txt',)


@dataclasses.dataclass(frozen=True)
class Bug:
    """The bug the fork fixes."""

    id: str
    url: str
    # ((label, text), ...): a failing test whose reason holds text failed
    # for the bug; label names the way it failed, as the tables show it
    failures: tuple


@dataclasses.dataclass(frozen=True)
class Unit:
    """One unit of the fix: a behaviour a release has or lacks."""

    name: str
    summary: str
    # the file of nova that holds it, and the functions (Class.method) to
    # read there; a release has those of them its code has
    path: str
    functions: tuple
    # the call that shows a function lacks the unit, as a pattern (see
    # nova_fork.units); or has (below)
    lacks: str = ''
    # the regression tests a release lacking the unit fails, a regular
    # expression over test ids
    affects: str = ''
    # the regression tests in which a release lacking the unit gives a
    # guest one host device twice, which real libvirt refuses (a regular
    # expression over test ids; nova-fork libvirt)
    repeats: str = ''
    # the expression that shows a function has the unit (instead of lacks)
    has: str = ''
    # FILE:Class.method (FILE: the unit's by default) that a release must
    # have for the unit to apply: the path it fixes starts there
    since: str = ''


# The providers of a base's interpreter (env/runtime.py), and the default.
RUNTIMES = ('path', 'pyenv', 'uv') + tuple(
    'debian:%s' % s for s in facts.SUITES)
DEFAULT_RUNTIME = ('path', 'pyenv')


@dataclasses.dataclass(frozen=True)
class Commit:
    """One entry of a series: a patch, or a message for plain new files."""

    number: int
    name: str
    path: pathlib.Path
    files: tuple
    sources: tuple = ()
    # the units this commit builds on: a tree left without one of them
    # (nova-fork build --without UNIT) cannot have this commit either
    needs: tuple = ()
    # the unit of the fix this commit is; None for a commit of tests
    unit: str = None
    # the change for Gerrit the commit is part of (``review=CHANGE``;
    # nova-fork review), '' for none
    review: str = ''

    @property
    def is_patch(self):
        return self.name.endswith('.patch')

    @property
    def is_fix(self):
        """True when the commit is (part of) a unit of the fix."""
        return self.unit is not None


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
    tests: tuple
    root: pathlib.Path
    unit_tests: tuple = ()
    lock_extra: tuple = ()
    # constraints for the environments that build the lock's sdists
    build_constraints: tuple = ()
    releases: tuple = ()
    default_nova: str = ''
    default_sha256: str = ''
    quilt: bool = False
    backport_of: str = ''
    setenv: tuple = ()
    # where the interpreter comes from, in the order to try: words among
    # path, pyenv, uv and debian:SUITE (see env/runtime.py)
    runtime: tuple = DEFAULT_RUNTIME
    # where the line's variants of the project's new files are (None: the
    # files/ folder of its patches)
    variants: pathlib.Path = None
    # what .ci/run does with the line (CI_STEPS)
    ci: tuple = ('reproduce', 'export')

    @property
    def variants_dir(self):
        """The folder of the line's variants of the project's new files."""
        return self.variants or self.patches / 'files'

    @property
    def label(self):
        """The series, or SERIES-VERSION for another release of it."""
        if self.default_nova and self.nova != self.default_nova:
            return '%s-%s' % (self.series, self.nova)
        return self.series

    @property
    def listed(self):
        """{version: sha256} of the releases bases.ini lists for the line."""
        known = dict(self.releases)
        known[self.default_nova] = self.default_sha256
        return known

    def for_release(self, version, sha256=None):
        """The same series on another release it lists in ``releases``.

        sha256: the pin of a release it does not list (tree/pins.py).
        """
        if version is None or version == self.nova:
            return self
        known = self.listed
        if version not in known and sha256:
            known[version] = sha256
        if version not in known:
            raise errors.UsageError(
                'series %s is not set up for nova %s; its releases are %s '
                '(add "VERSION SHA256" to its releases in %s)' % (
                    self.series, version,
                    ', '.join([self.default_nova] + sorted(
                        v for v in known if v != self.default_nova)),
                    BASES_FILE))
        return dataclasses.replace(self, nova=version, sha256=known[version])

    @property
    def release_dir(self):
        """Where the line keeps the commits written for this release alone.

        A commit of the line that conflicts with an older release of its
        series gets that release's own backport (nova-fork backport LINE
        --release V), kept as patches/LINE/V/NAME under the entry's name;
        releases that take the same backport share a folder named for the
        first and the last of them, patches/LINE/FIRST..LAST.
        """
        here = facts.version_key(self.nova)
        for folder in sorted(self.patches.glob('[0-9]*')):
            first, _, last = folder.name.partition('..')
            try:
                if folder.is_dir() and (facts.version_key(first) <= here <=
                                        facts.version_key(last or first)):
                    return folder
            except ValueError:
                continue  # not named for releases
        return self.patches / self.nova

    def commits(self, check_files=True):
        commits = read_series(self.patches / 'series', self.root,
                              check_files, self.variants_dir)
        if self.nova == self.default_nova:
            return commits
        return [dataclasses.replace(c, path=self.release_dir / c.name)
                if (self.release_dir / c.name).is_file() else c
                for c in commits]

    def is_own(self, commit):
        """True when commit is one this release alone has."""
        return (self.nova != self.default_nova and
                commit.path.parent == self.release_dir)


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


def _read(root):
    parser = configparser.ConfigParser(interpolation=None)
    if not parser.read(pathlib.Path(root) / BASES_FILE):
        raise errors.UsageError('cannot read %s' % (
            pathlib.Path(root) / BASES_FILE))
    return parser


def is_line(section):
    """True for the sections of bases.ini that are lines."""
    return section not in (BUG_SECTION, SERIES_SECTION) and \
        not section.startswith(UNIT_PREFIX)


def load_bug(root):
    parser = _read(root)
    if not parser.has_section(BUG_SECTION):
        raise errors.UsageError('%s has no [%s] section: say which bug the '
                                'fork fixes (id, url, failures)' % (
                                    BASES_FILE, BUG_SECTION))
    sec = parser[BUG_SECTION]
    failures = []
    for line in sec.get('failures', '').splitlines():
        if line.strip():
            label, sep, text = line.partition(':')
            if not sep or not text.strip():
                raise errors.UsageError(
                    '%s: [bug] failures takes "LABEL: TEXT" lines, not %r'
                    % (BASES_FILE, line.strip()))
            failures.append((label.strip(), text.strip()))
    return Bug(id=sec['id'], url=sec['url'], failures=tuple(failures))


def load_units(root):
    """{name: Unit} in the order bases.ini gives them."""
    parser = _read(root)
    units = {}
    for section in parser.sections():
        if not section.startswith(UNIT_PREFIX):
            continue
        name = section[len(UNIT_PREFIX):].strip()
        sec = parser[section]
        try:
            if bool(sec.get('lacks')) == bool(sec.get('has')):
                raise errors.UsageError(
                    '%s: [%s] needs either lacks (the call that shows a '
                    'release lacks the unit) or has (what shows it has '
                    'it)' % (BASES_FILE, section))
            units[name] = Unit(
                name=name, summary=sec['summary'], path=sec['file'],
                functions=tuple(sec['functions'].split()),
                lacks=sec.get('lacks', ''), has=sec.get('has', ''),
                since=sec.get('since', ''),
                # a regular expression, which may be folded over lines
                affects=''.join(sec.get('affects', '').split()),
                repeats=''.join(sec.get('repeats', '').split()))
        except KeyError as exc:
            raise errors.UsageError('%s: [%s] has no %s option' % (
                BASES_FILE, section, exc.args[0]))
    return units


def load_series_names(root):
    """{major version: OpenStack series name}, oldest first."""
    parser = _read(root)
    if not parser.has_section(SERIES_SECTION):
        return {}
    return {int(major): name for major, name in sorted(
        parser[SERIES_SECTION].items(), key=lambda kv: int(kv[0]))}


# the releases of another line's series, which a line does not take from
# the line it is like
OWN_ONLY = ('releases',)


def _options(parser, series, seen=()):
    """A line's options: its own, over those of the line it is ``like``.

    releases lists releases of the line's own series, so it is never
    taken from another line.
    """
    own = dict(parser[series])
    like = own.pop('like', '').strip()
    if not like:
        return own
    if like in seen + (series,) or not parser.has_section(like) or \
            not is_line(like):
        raise errors.UsageError(
            '%s: series %s is like %r, which is not another line' % (
                BASES_FILE, series, like))
    options = {k: v for k, v in _options(parser, like, seen + (series,))
               .items() if k not in OWN_ONLY}
    options.update(own)
    return options


def load_bases(root):
    parser = _read(root)
    bases = {}
    for series in filter(is_line, parser.sections()):
        sec = _options(parser, series)
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
                tests=tuple(sec.get('tests', '').split()),
                root=root,
                unit_tests=tuple(sec.get('unit_tests', '').split()),
                lock_extra=tuple(sec.get('lock_extra', '').split()),
                build_constraints=tuple(
                    sec.get('build_constraints', '').split()),
                releases=_pairs(sec.get('releases', '')),
                default_nova=sec['nova'],
                default_sha256=sec['sha256'].lower(),
                quilt=_boolean(series, 'quilt', sec.get('quilt', 'false')),
                backport_of=sec.get('backport_of', ''),
                setenv=_setenv(series, sec.get('setenv', '')),
                runtime=_runtime(series, sec.get('runtime', '')),
                variants=(root / sec['variants'] if sec.get('variants')
                          else None),
                ci=_ci(series, sec.get('ci', 'reproduce export')),
            )
        except KeyError as exc:
            raise errors.UsageError(
                '%s: series %s has no %s option' % (
                    root / BASES_FILE, series, exc.args[0]))
    return bases


CI_STEPS = ('reproduce', 'export', 'root')


def _ci(series, text):
    steps = tuple(text.split())
    unknown = [s for s in steps if s not in CI_STEPS]
    if unknown:
        raise errors.UsageError(
            '%s: series %s has ci = %s; the steps are %s' % (
                BASES_FILE, series, text, ', '.join(CI_STEPS)))
    return steps


def _boolean(series, option, text):
    states = configparser.ConfigParser.BOOLEAN_STATES
    if text.strip().lower() not in states:
        raise errors.UsageError('%s: series %s: %s takes true or false, not '
                                '%r' % (BASES_FILE, series, option, text))
    return states[text.strip().lower()]


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
    """Parse a series file into (name, files, unit, needs, review) tuples.

    One commit a line, applied in order: a patch file name, or a ``.msg``
    file holding the commit message for plain new files.  ``unit=NAME``
    says which unit of the fix a patch is (every fix is one unit; a commit
    without one only adds tests); ``needs=NAME`` says it builds on another
    unit, so a tree left without that unit cannot have it either;
    ``review=CHANGE`` marks a commit of the change CHANGE for Gerrit
    (``nova-fork review --change CHANGE``), the bare word ``review`` one
    of the first change, ``move``.  Other words are new files of the
    project, added to that commit.  Blank lines and ``#`` comments are
    ignored.

    >>> parse_series('# fixes\\n0001-a.patch unit=u1 review\\n\\n'
    ...              '0002-b.msg x.py y.py\\n'
    ...              '0003-c.patch unit=u2 needs=u1 z.yaml review=lm\\n')
    ... # doctest: +NORMALIZE_WHITESPACE
    [('0001-a.patch', (), 'u1', (), 'move'),
     ('0002-b.msg', ('x.py', 'y.py'), None, (), ''),
     ('0003-c.patch', ('z.yaml',), 'u2', ('u1',), 'lm')]
    """
    entries = []
    for line in text.splitlines():
        line = line.split('#', 1)[0].strip()
        if line:
            name, *words = line.split()
            units = [w[len('unit='):] for w in words if w.startswith('unit=')]
            needs = tuple(w[len('needs='):] for w in words
                          if w.startswith('needs='))
            changes = [w[len(REVIEW) + 1:] for w in words
                       if w.startswith(REVIEW + '=')]
            review = ','.join(changes) or (
                DEFAULT_CHANGE if REVIEW in words else '')
            files = tuple(w for w in words
                          if not w.startswith(('unit=', 'needs=',
                                               REVIEW + '=')) and
                          w != REVIEW)
            entries.append((name, files, ','.join(units) or None, needs,
                            review))
    return entries


def read_series(path, root, check_files=True, variants=None):
    if not path.is_file():
        raise errors.UsageError(
            'no series file at %s: list the patches there, one a line' % path)
    units = load_units(root)
    commits = []
    for number, (name, files, unit, needs, review) in enumerate(
            parse_series(path.read_text()), start=1):
        where = '%s: entry %d (%s)' % (path, number, name)
        if not (name.endswith('.patch') or name.endswith('.msg')):
            raise errors.UsageError(
                '%s is neither a .patch nor a .msg file' % where)
        if name.endswith('.msg') and not files:
            raise errors.UsageError('%s is a message with no files' % where)
        if name.endswith('.patch') and unit is None and check_files:
            code = [f for f in facts.changed_files(
                (path.parent / name).read_text())
                if not f.startswith('nova/tests/') and f not in REQUIREMENTS]
            if code:
                raise errors.UsageError(
                    '%s says no unit, and changes %s: a patch of nova\'s '
                    'code is a unit of the fix; add unit=NAME, one of %s' % (
                        where, ', '.join(code), ', '.join(units)))
        for word in ((unit,) if unit else ()) + needs:
            if word not in units:
                raise errors.UsageError(
                    '%s names unit %r, which bases.ini does not define '
                    '(its units: %s; a commit is one unit)' % (
                        where, word, ', '.join(units)))
        sources = tuple(source_of(variants or path.parent / 'files', root, f)
                        for f in files)
        for item in [path.parent / name] + list(sources):
            if check_files and not item.is_file():
                raise errors.UsageError(
                    '%s names %s, which does not exist' % (where, item))
        commits.append(Commit(number, name, path.parent / name, files,
                              sources, needs, unit, review))
    return commits


def source_of(variants, root, name):
    """Where the project keeps new file NAME for a series.

    A series whose test infrastructure differs keeps its own variant in its
    variants folder (``variants`` in bases.ini, shared by the lines of one
    generation of nova's test API; by default the files/ folder of its
    patches), at NAME; otherwise the file at NAME in the project is used.
    """
    variant = variants / name
    return variant if variant.is_file() else root / name
