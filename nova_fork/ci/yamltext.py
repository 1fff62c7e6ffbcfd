"""YAML text of plain data, for the generated Zuul configuration.

The tool runs on Python's standard library alone, which has no YAML
writer; the configuration is plain data (mappings, lists, strings,
integers, booleans), which this writes in block style, as Zuul
configurations are written by hand.  A string that YAML would read as
something else (a number, a boolean, a line such as 2024.1) is quoted.
"""

import json
import re

# strings YAML 1.1 (PyYAML, Zuul's loader) reads as booleans or null
_WORDS = {'y', 'n', 'yes', 'no', 'true', 'false', 'on', 'off', 'null', '~'}
_PLAIN = re.compile(r'[A-Za-z_/][A-Za-z0-9_./-]*\Z')
INDENT = '  '


def scalar(value):
    """A scalar as YAML reads it back.

    >>> [scalar(v) for v in ('python3.11', '2024.1', 'yes', 'a b', 3, True)]
    ['python3.11', "'2024.1'", "'yes'", "'a b'", '3', 'true']
    >>> scalar('^patches/2024\\\\.1/'), scalar("it's")
    ("'^patches/2024\\\\.1/'", "'it''s'")
    """
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if value is None:
        return 'null'
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, str):
        raise TypeError('no YAML for %r' % (value,))
    if _PLAIN.match(value) and value.lower() not in _WORDS:
        return value
    if value.isprintable():
        return "'%s'" % value.replace("'", "''")
    return json.dumps(value)


def _is_scalar(value):
    return not isinstance(value, (dict, list, tuple))


def _lines(value, depth):
    """The lines of a mapping or list at depth (no trailing newline)."""
    pad = INDENT * depth
    if isinstance(value, dict):
        if not value:
            return [pad + '{}']
        out = []
        for key, item in value.items():
            head = '%s%s:' % (pad, scalar(key))
            if _is_scalar(item):
                out.extend(_scalar_lines(head, item, depth + 1))
            elif not item:
                out.append(head + (' {}' if isinstance(item, dict)
                                   else ' []'))
            else:
                out.append(head)
                out.extend(_lines(item, depth + 1))
        return out
    out = []
    for item in value:
        if _is_scalar(item):
            out.extend(_scalar_lines(pad + '-', item, depth + 1))
        elif isinstance(item, (list, tuple)) and all(map(_is_scalar, item)):
            # an argv: one line
            out.append('%s- [%s]' % (pad, ', '.join(map(scalar, item))))
        else:
            inner = _lines(item, depth + 1)
            out.append(pad + '- ' + inner[0][len(pad) + len(INDENT):])
            out.extend(inner[1:])
    return out


def _scalar_lines(head, value, depth):
    """head and a scalar: one line, or a literal block for lines of text."""
    if isinstance(value, str) and '\n' in value.rstrip('\n'):
        text = value if value.endswith('\n') else value + '\n'
        body = text[:-1].split('\n')
        if all(line == line.rstrip() and line.isprintable()
               for line in body) and not body[0].startswith(' '):
            return [head + ' |'] + [
                (INDENT * depth + line) if line else '' for line in body]
    return [head + ' ' + scalar(value)]


def dump(items, header=''):
    """A YAML document of a list of (comment, value) items.

    comment: lines put above the item (None for none); header: lines of
    comment at the top.

    >>> print(dump([('a job', {'job': {'name': 'x', 'vars': {
    ...     'argv': [['export', '2024.1']], 'text': 'one\\ntwo\\n'}}})],
    ...     header='generated'), end='')
    # generated
    <BLANKLINE>
    # a job
    - job:
        name: x
        vars:
          argv:
            - [export, '2024.1']
          text: |
            one
            two
    """
    out = ['# ' + line if line else '#' for line in header.splitlines()]
    for comment, value in items:
        if out:
            out.append('')
        out.extend('# ' + line for line in (comment or '').splitlines())
        out.extend(_lines([value], 0))
    return '\n'.join(out) + '\n'
