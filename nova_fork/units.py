"""Which units of the fix a nova release has, read from its code.

A unit (bases.ini, ``[unit NAME]``) names a file of nova, the functions
there that must carry it, and a call pattern that shows a function lacks
it (``lacks``), or an expression pattern that shows it has it (``has``).
The functions are found by name and the calls by shape with Python's own
parser, so the answer does not depend on the lines around them: a release
whose code moved, or was reformatted, gets the same answer.  ``since``
names a function (``FILE:Class.method``, the unit's file by default) that
the path the unit fixes starts in: a release without it does not have
that path, and the unit does not apply (``n/a``).

A pattern is a Python call expression.  ``_`` matches any one argument and
``...`` any further arguments (keywords included); without ``...`` the call
must have exactly the arguments written and no keywords::

    self.tracker.abort_instance_claim(_, self.instance, ...)

matches ``self.tracker.abort_instance_claim(ctx, self.instance, node)``
but not ``...(ctx, self.instance_ref, node)``.  A keyword of the pattern
must be in the call, in any place, with that value (``_``: any); Python
puts ``...``, a positional argument, before the keywords::

    objects.MigrationContext(..., old_pci_devices=instance.pci_devices)

matches a call that passes ``old_pci_devices=instance.pci_devices``
among any other arguments, but not one that passes a copy.
"""

import ast
import tarfile

from nova_fork import errors

HAS = 'has'
NEEDS = 'needs'
# the release has no such path: the unit does not apply
NA = 'n/a'


class UnknownCode(errors.ForkError):
    """The code does not have what a unit looks for: the answer is unknown."""

    exit_code = 5


def parse_pattern(text, call=True):
    """The AST of a pattern: a call, or with call False any expression."""
    try:
        node = ast.parse(text.strip(), mode='eval').body
    except SyntaxError:
        node = None
    if node is None or (call and not isinstance(node, ast.Call)):
        raise errors.UsageError('a unit\'s "lacks" must be a call such as '
                                '"self.f(_, self.instance, ...)", not %r'
                                % text)
    return node


def _dump(node):
    return ast.dump(node, annotate_fields=False, include_attributes=False)


def _is(node, name):
    return isinstance(node, ast.Name) and node.id == name


def _is_rest(node):
    return isinstance(node, ast.Constant) and node.value is Ellipsis


def matches(call, pattern):
    """True when call (an ast.Call) has the shape of pattern.

    >>> p = parse_pattern('self.f(_, self.x, ...)')
    >>> c = lambda text: ast.parse(text, mode='eval').body
    >>> matches(c('self.f(a, self.x)'), p), matches(c('self.f(a, self.y)'), p)
    (True, False)
    >>> matches(c('self.f(a, self.x, b, k=1)'), p)
    True
    >>> p = parse_pattern('self.g(_)')
    >>> matches(c('self.g(d)'), p), matches(c('self.g(d, i)'), p)
    (True, False)
    >>> matches(c('self.g(d, instance=i)'), p)
    False

    A keyword of the pattern must be in the call, with that value:

    >>> p = parse_pattern('M(..., old=i.devs)')
    >>> matches(c('M(a, new=b, old=i.devs, req=r)'), p)
    True
    >>> matches(c('M(new=b, old=copy(i.devs))'), p), matches(c('M(a)'), p)
    (False, False)
    >>> p = parse_pattern('self.g(_, old=_)')
    >>> matches(c('self.g(d, old=x)'), p), matches(c('self.g(d, x)'), p)
    (True, False)
    >>> matches(c('self.g(d, old=x, new=y)'), p)
    False
    """
    if not same(call.func, pattern.func):
        return False
    args = list(pattern.args)
    rest = bool(args) and _is_rest(args[-1])
    if rest:
        args = args[:-1]
    if len(call.args) < len(args):
        return False
    given = {kw.arg: kw.value for kw in call.keywords}
    if not rest and (len(call.args) != len(args) or
                     set(given) != {kw.arg for kw in pattern.keywords}):
        return False
    for got, want in zip(call.args, args):
        if not same(got, want):
            return False
    for kw in pattern.keywords:
        if kw.arg not in given or not same(given[kw.arg], kw.value):
            return False
    return True


def same(node, pattern):
    """True when node has the shape of pattern, any expression.

    ``_`` stands for any node; a call is matched as matches() does.

    >>> e = lambda text: ast.parse(text, mode='eval').body
    >>> same(e('a or i.reqs.requests'), e('_ or i.reqs.requests'))
    True
    >>> same(e('a or i.reqs'), e('_ or i.reqs.requests'))
    False
    >>> same(e('self.c[u].extend(d)'), e('self.c[_].extend(_)'))
    True
    """
    if _is(pattern, '_'):
        return True
    if isinstance(pattern, ast.Call):
        return isinstance(node, ast.Call) and matches(node, pattern)
    if type(node) is not type(pattern):
        return False
    for field, want in ast.iter_fields(pattern):
        if field == 'ctx':
            continue
        got = getattr(node, field, None)
        if isinstance(want, list):
            if not isinstance(got, list) or len(got) != len(want) or \
                    not all(same(g, w) for g, w in zip(got, want)):
                return False
        elif isinstance(want, ast.AST):
            if not isinstance(got, ast.AST) or not same(got, want):
                return False
        elif got != want:
            return False
    return True


def find_functions(module, qualnames):
    """{qualname: FunctionDef} of those of qualnames the module defines."""
    found = {}
    for cls in module.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        for item in cls.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = '%s.%s' % (cls.name, item.name)
                if name in qualnames:
                    found[name] = item
    return found


def since(unit):
    """(file, Class.method) of the unit's since, or None."""
    if not unit.since:
        return None
    path, _, name = unit.since.rpartition(':')
    return path or unit.path, name


def _parse(path, source):
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise UnknownCode('%s does not parse (%s)' % (path, exc))


def verdict(unit, source, sources=None):
    """(HAS, NEEDS or NA, detail) for a unit, from the source of its file.

    sources: {path: source} of the other files its since names.  Raises
    UnknownCode when the file has none of the unit's functions, or they
    make no call of the pattern's callee: then the code is not what the
    unit knows how to read, and no answer is better than a guess.
    """
    start = since(unit)
    if start:
        path, name = start
        text = source if path == unit.path else (sources or {}).get(path)
        if text is None or not find_functions(_parse(path, text), [name]):
            return NA, 'no %s in %s: the release has no such path' % (
                name, path)
    module = _parse(unit.path, source)
    functions = find_functions(module, unit.functions)
    if not functions:
        raise UnknownCode('%s has none of %s' % (
            unit.path, ', '.join(unit.functions)))
    if unit.has:
        return _has(unit, functions)
    pattern = parse_pattern(unit.lacks)
    lacking, calls = [], 0
    for name, func in sorted(functions.items()):
        for node in ast.walk(func):
            if isinstance(node, ast.Call) and \
                    _dump(node.func) == _dump(pattern.func):
                calls += 1
                if matches(node, pattern):
                    lacking.append('%s line %d' % (name, node.lineno))
    if not calls:
        raise UnknownCode('%s makes no call to %s' % (
            ', '.join(sorted(functions)), ast.unparse(pattern.func)))
    if lacking:
        return NEEDS, 'calls %s in %s' % (
            ast.unparse(pattern), ', '.join(lacking))
    return HAS, 'in %s' % ', '.join(sorted(functions))


def _has(unit, functions):
    pattern = parse_pattern(unit.has, call=False)
    for name, func in sorted(functions.items()):
        for node in ast.walk(func):
            if same(node, pattern):
                return HAS, '%s in %s line %d' % (
                    ast.unparse(pattern), name, node.lineno)
    return NEEDS, 'no %s in %s' % (ast.unparse(pattern),
                                   ', '.join(sorted(functions)))


def read_tree(tree, unit):
    path = tree / unit.path
    if not path.is_file():
        raise UnknownCode('the tree has no %s' % unit.path)
    return path.read_text()


def read_sdist(sdist, paths):
    """{path: text} of the given files of nova, straight from the sdist."""
    wanted = set(paths)
    found = {}
    with tarfile.open(sdist) as tar:
        for member in tar:
            name = member.name.split('/', 1)[-1]
            if name in wanted and member.isfile():
                found[name] = tar.extractfile(member).read().decode()
                if len(found) == len(wanted):
                    break
    return found


def paths(units):
    """The files of nova the units read: theirs and those of since."""
    return {u.path for u in units.values()} | {
        since(u)[0] for u in units.values() if u.since}


def survey(units, sources):
    """[(unit, verdict, detail)] for every unit, from {path: source}."""
    results = []
    for unit in units.values():
        if unit.path not in sources:
            raise UnknownCode('the release has no %s' % unit.path)
        results.append((unit,) + verdict(unit, sources[unit.path], sources))
    return results


def of_sdist(units, sdist):
    return survey(units, read_sdist(sdist, paths(units)))


def of_release(units, version, sdist):
    """survey() of nova VERSION's sdist; UnknownCode names the release."""
    try:
        return of_sdist(units, sdist)
    except UnknownCode as exc:
        raise UnknownCode('cannot tell which units of the fix nova %s has: '
                          '%s' % (version, exc))


def of_tree(units, tree):
    sources = {}
    for path in paths(units):
        if (tree / path).is_file():
            sources[path] = (tree / path).read_text()
    for unit in units.values():
        if unit.path not in sources:
            read_tree(tree, unit)
    return survey(units, sources)


def lacking(results):
    """The names of the units a survey says the release needs."""
    return [unit.name for unit, answer, _ in results if answer == NEEDS]
