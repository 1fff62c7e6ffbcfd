import hashlib
import sys
from unittest import mock
import urllib.error

import testtools

from nova_fork import errors
from nova_fork.tests import fakes
from nova_fork.tree import fetch
from nova_fork.tree import index


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
        fake = self.useFixture(fakes.FakeIndex())
        entry = fake.serve('34.0.0', b'nova 34')
        self.assertEqual('>=3.11', entry['requires-python'])
        with mock.patch.object(sys, 'version_info', (3, 9, 18)):
            path = fetch.fetch(self.project.root, '34.0.0',
                               entry['hashes']['sha256'])
        self.assertEqual(b'nova 34', path.read_bytes())
        self.assertEqual([fakes.PAGE, entry['url']], fake.asked)

    def test_the_index_sha256_checks_the_download(self):
        fake = self.useFixture(fakes.FakeIndex())
        entry = fake.serve('18.2.2', b'nova 18')
        fake.files[entry['url']] = b'altered in transit'
        exc = self.assertRaises(errors.HashMismatch, fetch.fetch,
                                self.project.root, '18.2.2')
        self.assertIn('the index publishes %s' % entry['hashes']['sha256'],
                      str(exc))
        self.assertEqual(['nova-1.0.0.tar.gz'], self.cached())

    def test_bases_sha256_checks_the_download(self):
        fake = self.useFixture(fakes.FakeIndex())
        fake.serve('18.2.2', b'nova 18')
        exc = self.assertRaises(errors.HashMismatch, fetch.fetch,
                                self.project.root, '18.2.2', 'f' * 64)
        self.assertIn('bases.ini records ' + 'f' * 64, str(exc))
        self.assertEqual(['nova-1.0.0.tar.gz'], self.cached())

    def test_unknown_release(self):
        self.useFixture(fakes.FakeIndex())
        exc = self.assertRaises(errors.FetchError, fetch.fetch,
                                self.project.root, '34.9.9')
        self.assertEqual(
            'nova 34.9.9 is not a release on %s (the newest final release '
            'there is 34.0.0)' % fakes.PAGE, str(exc))

    def test_no_network(self):
        fake = self.useFixture(fakes.FakeIndex())
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
        fake = self.useFixture(fakes.FakeIndex(page, 'text/html'))
        fake.files['https://pypi.org/f/nova-21.0.0.tar.gz'] = data
        path = fetch.fetch(self.project.root, '21.0.0')
        self.assertEqual(data, path.read_bytes())
        self.assertEqual({'21.0.0'}, set(index.read()))
        self.assertEqual('>=3.6', index.read()['21.0.0']['requires-python'])

    def test_the_page_is_read_once(self):
        fake = self.useFixture(fakes.FakeIndex())
        fake.serve('18.2.2', b'nova 18')
        fake.serve('18.3.0', b'nova 18.3')
        fetch.fetch(self.project.root, '18.2.2')
        fetch.fetch(self.project.root, '18.3.0')
        self.assertEqual(1, fake.asked.count(fakes.PAGE))
