"""nova's page on the package index: its sdists, their hashes and URLs.

The page is read with the simple repository API, as pip reads it: JSON
(PEP 691) where the index serves it, HTML (PEP 503) otherwise.  An sdist is
data here: nothing is filtered by the Requires-Python of the interpreter
that runs the tool, which only reads the code and runs its tests in the
line's own interpreter.
"""

import html.parser
import json
import os
import urllib.error
import urllib.parse
import urllib.request

from nova_fork import errors
from nova_fork import facts

INDEX = 'https://pypi.org/simple'
ACCEPT = 'application/vnd.pypi.simple.v1+json, text/html;q=0.1'
PREFIX, SUFFIX = 'nova-', '.tar.gz'

_pages = {}


def url():
    """The index pip would use: PIP_INDEX_URL, or PyPI."""
    return os.environ.get('PIP_INDEX_URL', INDEX).rstrip('/') + '/nova/'


class _Anchors(html.parser.HTMLParser):
    """The files of a PEP 503 page, in the shape of PEP 691's."""

    def __init__(self):
        super().__init__()
        self.files = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag != 'a' or not attrs.get('href'):
            return
        link, _, fragment = attrs['href'].partition('#')
        name = urllib.parse.unquote(link.rstrip('/').rsplit('/', 1)[-1])
        algo, _, digest = fragment.partition('=')
        self.files.append({
            'filename': name, 'url': link,
            'hashes': {algo: digest} if digest else {},
            'requires-python': attrs.get('data-requires-python'),
            'yanked': 'data-yanked' in attrs})


def parse(body, content_type, base):
    """The files a page lists, each with an absolute url."""
    if 'json' in content_type:
        files = json.loads(body)['files']
    else:
        anchors = _Anchors()
        anchors.feed(body.decode('utf-8', 'replace'))
        files = anchors.files
    for entry in files:
        entry['url'] = urllib.parse.urljoin(base, entry['url'])
    return files


def sdists(files):
    """{version: file entry} of the sdists among FILES."""
    found = {}
    for entry in files:
        name = entry.get('filename', '')
        if name.startswith(PREFIX) and name.endswith(SUFFIX):
            found[name[len(PREFIX):-len(SUFFIX)]] = entry
    return found


def read():
    """{version: file entry} of nova's sdists on the index (read once)."""
    page = url()
    if page not in _pages:
        request = urllib.request.Request(page, headers={'Accept': ACCEPT})
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                kind = answer.headers.get('Content-Type', '')
                _pages[page] = sdists(parse(answer.read(), kind, page))
        except (urllib.error.URLError, OSError) as exc:
            raise errors.FetchError(
                'cannot read %s: %s; the index is not reachable (no '
                'network?): connect, or copy the sdist into .cache/sdists'
                % (page, getattr(exc, 'reason', exc)))
        except (ValueError, KeyError) as exc:
            raise errors.FetchError(
                '%s is not a simple repository page (PEP 503 or 691): %s; '
                'set PIP_INDEX_URL to an index' % (page, exc))
    return _pages[page]


def entry(version):
    """The file entry of nova-VERSION.tar.gz; FetchError if there is none."""
    files = read()
    if version in files:
        return files[version]
    known = finals(files)
    newest = known[-1] if known else None
    there = ' (the newest final release there is %s)' % newest \
        if newest else ''
    raise errors.FetchError(
        'nova %s is not a release on %s%s' % (version, url(), there))


def finals(files):
    """The final releases among FILES' versions, oldest first.

    >>> finals({'34.0.0': {}, '34.0.0.0rc1': {}, '9.1.0': {}})
    ['9.1.0', '34.0.0']
    """
    return sorted((v for v in files if all(p.isdigit() for p in v.split('.'))),
                  key=facts.version_key)


def newest_final(files, major):
    """The newest final release of nova MAJOR among FILES, or None."""
    same = [v for v in finals(files) if facts.version_key(v)[0] == major]
    return same[-1] if same else None
