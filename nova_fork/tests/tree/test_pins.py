import io
from unittest import mock
import urllib.error

import testtools

from nova_fork import cmd
from nova_fork import config
from nova_fork import errors
from nova_fork.tests import fakes
from nova_fork.tree import pins


class PinsTest(testtools.TestCase):
    """--release V for a release bases.ini does not list."""

    def setUp(self):
        super().setUp()
        self.project = self.useFixture(fakes.FakeProject())
        self.sha256 = self.project.add_release('1.0.3')
        self.index = self.useFixture(fakes.FakeIndex({'files': [
            {'filename': 'nova-1.0.3.tar.gz', 'url': 'https://f/1.0.3',
             'hashes': {'sha256': self.sha256}}]}))
        self.base = config.get_base(self.project.root, 'fake')

    def build(self, *args):
        with mock.patch('sys.stdout', new_callable=io.StringIO) as out, \
                mock.patch('sys.stderr', new_callable=io.StringIO) as err:
            code = cmd.main(['build', 'fake'] + list(args))
        return code, out.getvalue(), err.getvalue()

    def test_a_release_of_the_series_is_pinned_then_read(self):
        code, out, err = self.build('--release', '1.0.3')
        self.assertEqual(0, code, err)
        self.assertEqual(str(self.project.root / 'build' / 'fake-1.0.3'),
                         out.strip())
        self.assertIn('pin: nova 1.0.3, sha256 %s from %s, recorded in '
                      'SHA256SUMS' % (self.sha256, fakes.PAGE), err)
        self.assertEqual('%s  nova-1.0.3.tar.gz\n' % self.sha256,
                         pins.path(self.project.root).read_text())
        # the next run reads the pin, not the index
        self.index.error = urllib.error.URLError('no network')
        self.assertEqual('1.0.3', pins.on_release(self.base, '1.0.3').nova)

    def test_the_pin_refuses_another_sdist(self):
        pins.save(self.project.root, {'1.0.3': 'f' * 64})
        code, _, err = self.build('--release', '1.0.3')
        self.assertEqual(4, code, err)
        self.assertIn('sha256 mismatch for nova-1.0.3.tar.gz', err)
        self.assertFalse((self.project.root / 'build' / 'fake-1.0.3')
                         .exists())

    def test_a_release_of_another_series(self):
        exc = self.assertRaises(errors.UsageError, pins.on_release,
                                self.base, '2.0.1')
        self.assertEqual('nova 2.0.1 is not a release of fake (nova 1.x): '
                         'name the line of its series (nova-fork check '
                         '2.0.1 says which)', str(exc))
        self.assertFalse(pins.path(self.project.root).exists())

    def test_not_a_final_release(self):
        exc = self.assertRaises(errors.UsageError, pins.on_release,
                                self.base, '1.0.4.0rc1')
        self.assertIn('not a final release', str(exc))

    def test_a_release_the_index_lacks(self):
        exc = self.assertRaises(errors.FetchError, pins.on_release,
                                self.base, '1.0.9')
        self.assertIn('nova 1.0.9 is not a release on', str(exc))
        self.assertFalse(pins.path(self.project.root).exists())

    def test_listed_releases_need_no_pin(self):
        self.project.append('releases = 1.0.3 %s\n' % self.sha256)
        base = config.get_base(self.project.root, 'fake')
        self.index.error = urllib.error.URLError('no network')
        self.assertEqual(self.sha256, pins.on_release(base, '1.0.3').sha256)
        self.assertFalse(pins.path(self.project.root).exists())
