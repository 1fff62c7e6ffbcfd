import contextlib
import hashlib
import io
import json
import subprocess
from unittest import mock

import testtools

from nova_fork import errors
from nova_fork.tests import fakes
from nova_fork.tree import fetch


class FetchTest(testtools.TestCase):

    def pip_says(self, text):
        done = subprocess.CompletedProcess([], 1, stdout=text)
        return mock.patch.object(fetch.subprocess, 'run', return_value=done)

    def test_no_network(self):
        project = self.useFixture(fakes.FakeProject())
        with self.pip_says('WARNING: Retrying ... NewConnectionError(...)\n'
                           'ERROR: Could not find a version that satisfies '
                           'the requirement nova==2.0.0 (from versions: '
                           'none)\n'):
            exc = self.assertRaises(errors.FetchError, fetch.fetch,
                                    project.root, '2.0.0')
        self.assertIn('PyPI is not reachable (no network?)', str(exc))
        self.assertEqual(['nova-1.0.0.tar.gz'], sorted(
            p.name for p in fetch.cache_dir(project.root).iterdir()))

    def test_unknown_release(self):
        project = self.useFixture(fakes.FakeProject())
        with self.pip_says('ERROR: Could not find a version that satisfies '
                           'the requirement nova==99 (from versions: 1.0)\n'
                           'ERROR: No matching distribution found for '
                           'nova==99\n'):
            exc = self.assertRaises(errors.FetchError, fetch.fetch,
                                    project.root, '99')
        self.assertIn('nova 99 is not a release on PyPI', str(exc))

    def test_sdist_whose_metadata_pip_cannot_build(self):
        # pip prepares an sdist's metadata even to download it; nova
        # 21.0.0's setup.cfg no longer parses: the index gives the file
        project = self.useFixture(fakes.FakeProject())
        data = b'the sdist'
        digest = hashlib.sha256(data).hexdigest()
        index = json.dumps({'files': [{
            'filename': 'nova-21.0.0.tar.gz', 'url': 'https://f/n.tgz',
            'hashes': {'sha256': digest}}]}).encode()
        answers = {'https://pypi.org/simple/nova/': index,
                   'https://f/n.tgz': data}

        def urlopen(request, timeout):
            url = getattr(request, 'full_url', request)
            return contextlib.closing(io.BytesIO(answers[url]))

        with self.pip_says('error: metadata-generation-failed\n'), \
                mock.patch.object(fetch.urllib.request, 'urlopen',
                                  side_effect=urlopen):
            path = fetch.fetch(project.root, '21.0.0', digest)
        self.assertEqual(data, path.read_bytes())
        answers['https://f/n.tgz'] = b'tampered'
        path.unlink()
        with self.pip_says('error: metadata-generation-failed\n'), \
                mock.patch.object(fetch.urllib.request, 'urlopen',
                                  side_effect=urlopen):
            exc = self.assertRaises(errors.HashMismatch, fetch.fetch,
                                    project.root, '21.0.0')
        self.assertIn('sha256 mismatch for nova-21.0.0.tar.gz', str(exc))
        self.assertFalse(path.exists())
