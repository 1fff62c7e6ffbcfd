import email.message
import hashlib
import io
import json
import pathlib
import sys
from unittest import mock
import urllib.error

import fixtures
import testtools

from nova_fork import errors
from nova_fork.tests import fakes
from nova_fork.tree import fetch
from nova_fork.tree import index

# nova's page on PyPI as pip reads it (PEP 691), its sdists only; the file
# says when it was recorded.
RECORDED = pathlib.Path(__file__).parent.parent / 'data' / \
    'pypi-simple-nova.json'
PAGE = 'https://pypi.org/simple/nova/'


class _Answer(io.BytesIO):

    def __init__(self, body, content_type):
        super().__init__(body)
        self.headers = email.message.Message()
        self.headers['Content-Type'] = content_type


class FakeIndex(fixtures.Fixture):
    """urlopen answering from a page and a {url: bytes} of files.

    The recorded page's file for VERSION is replaced by DATA, with the
    sha256 the index then publishes.
    """

    def __init__(self, page=None, content_type=index.ACCEPT.split(',')[0]):
        super().__init__()
        self.page = page if page is not None else json.loads(
            RECORDED.read_text())
        self.content_type = content_type
        self.files = {}
        self.asked = []
        self.error = None

    def serve(self, version, data):
        for entry in self.page['files']:
            if entry['filename'] == 'nova-%s.tar.gz' % version:
                entry['hashes'] = {'sha256': hashlib.sha256(data).hexdigest()}
                self.files[entry['url']] = data
                return entry
        raise AssertionError('%s is not on the recorded page' % version)

    def _urlopen(self, request, timeout):
        url = getattr(request, 'full_url', request)
        self.asked.append(url)
        if self.error:
            raise self.error
        if url == PAGE:
            body = self.page
            if not isinstance(body, bytes):
                body = json.dumps(body).encode()
            return _Answer(body, self.content_type)
        return _Answer(self.files[url], 'application/octet-stream')

    def _setUp(self):
        self.useFixture(fixtures.EnvironmentVariable('PIP_INDEX_URL'))
        self.useFixture(fixtures.MockPatchObject(index, '_pages', {}))
        self.useFixture(fixtures.MockPatchObject(
            fetch.urllib.request, 'urlopen', side_effect=self._urlopen))


class FetchTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())

    def cached(self):
        return sorted(p.name for p in
                      fetch.cache_dir(self.project.root).iterdir())

    def test_release_the_host_python_cannot_run(self):
        # nova 34.0.0 requires Python 3.11; the tool only reads it, so a
        # Python 3.9 host fetches it all the same (pip download would say
        # it is not a release)
        fake = self.useFixture(FakeIndex())
        entry = fake.serve('34.0.0', b'nova 34')
        self.assertEqual('>=3.11', entry['requires-python'])
        with mock.patch.object(sys, 'version_info', (3, 9, 18)):
            path = fetch.fetch(self.project.root, '34.0.0',
                               entry['hashes']['sha256'])
        self.assertEqual(b'nova 34', path.read_bytes())
        self.assertEqual([PAGE, entry['url']], fake.asked)

    def test_the_index_sha256_checks_the_download(self):
        fake = self.useFixture(FakeIndex())
        entry = fake.serve('18.2.2', b'nova 18')
        fake.files[entry['url']] = b'altered in transit'
        exc = self.assertRaises(errors.HashMismatch, fetch.fetch,
                                self.project.root, '18.2.2')
        self.assertIn('the index publishes %s' % entry['hashes']['sha256'],
                      str(exc))
        self.assertEqual(['nova-1.0.0.tar.gz'], self.cached())

    def test_bases_sha256_checks_the_download(self):
        fake = self.useFixture(FakeIndex())
        fake.serve('18.2.2', b'nova 18')
        exc = self.assertRaises(errors.HashMismatch, fetch.fetch,
                                self.project.root, '18.2.2', 'f' * 64)
        self.assertIn('bases.ini records ' + 'f' * 64, str(exc))
        self.assertEqual(['nova-1.0.0.tar.gz'], self.cached())

    def test_unknown_release(self):
        self.useFixture(FakeIndex())
        exc = self.assertRaises(errors.FetchError, fetch.fetch,
                                self.project.root, '34.9.9')
        self.assertEqual(
            'nova 34.9.9 is not a release on %s (the newest final release '
            'there is 34.0.0)' % PAGE, str(exc))

    def test_no_network(self):
        fake = self.useFixture(FakeIndex())
        fake.error = urllib.error.URLError(
            'Temporary failure in name resolution')
        exc = self.assertRaises(errors.FetchError, fetch.fetch,
                                self.project.root, '2.0.0')
        self.assertIn('the index is not reachable (no network?)', str(exc))
        self.assertEqual(['nova-1.0.0.tar.gz'], self.cached())

    def test_html_index(self):
        # a mirror that serves PEP 503 only (devpi, bandersnatch)
        data = b'nova 21'
        digest = hashlib.sha256(data).hexdigest()
        page = ('<html><body><a href="../../f/nova-21.0.0.tar.gz#sha256=%s" '
                'data-requires-python="&gt;=3.6">nova-21.0.0.tar.gz</a>'
                '<a href="../../f/nova-21.0.0-py3-none-any.whl">w</a>'
                '</body></html>' % digest).encode()
        fake = self.useFixture(FakeIndex(page, 'text/html'))
        fake.files['https://pypi.org/f/nova-21.0.0.tar.gz'] = data
        path = fetch.fetch(self.project.root, '21.0.0')
        self.assertEqual(data, path.read_bytes())
        self.assertEqual({'21.0.0'}, set(index.read()))
        self.assertEqual('>=3.6', index.read()['21.0.0']['requires-python'])

    def test_the_page_is_read_once(self):
        fake = self.useFixture(FakeIndex())
        fake.serve('18.2.2', b'nova 18')
        fake.serve('18.3.0', b'nova 18.3')
        fetch.fetch(self.project.root, '18.2.2')
        fetch.fetch(self.project.root, '18.3.0')
        self.assertEqual(1, fake.asked.count(PAGE))
