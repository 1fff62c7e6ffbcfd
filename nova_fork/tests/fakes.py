"""A tiny fake project: a fake nova sdist, bases.ini and a patch series."""

import email.message
import gzip
import hashlib
import io
import json
import os
import pathlib
import subprocess
import tarfile
import textwrap
import urllib.request

import fixtures

from nova_fork.tree import index

CLAIMS = textwrap.dedent('''\
    class Claim(object):
        def __init__(self, instance):
            self.instance = instance.obj_clone()

        def abort(self):
            self.tracker.abort_instance_claim(self.context, self.instance,
                                              self.nodename)
    ''')

FIXED_CLAIMS = CLAIMS.replace(
    'self.instance = instance.obj_clone()',
    'self.instance = instance.obj_clone()\n        self._ref = instance',
).replace('self.context, self.instance,', 'self.context, self._ref,')

MANAGER = textwrap.dedent('''\
    class PciDevTracker(object):
        def free_instance_claims(self, context, instance):
            for dev in self.pci_devs:
                self._free_device(dev)
    ''')

FIXED_MANAGER = MANAGER.replace('_free_device(dev)',
                                '_free_device(dev, instance)')

UNITS = textwrap.dedent('''\
    [bug]
    id = 1860555
    url = https://bugs.launchpad.net/nova/+bug/1860555
    failures =
        in use: already in use
        devices: PCI device

    [unit claim-abort]
    summary = Claim.abort aborts on the instance
    file = nova/compute/claims.py
    functions = Claim.abort
    lacks = self.tracker.abort_instance_claim(_, self.instance, ...)
    affects = test_fake

    [unit free-instance]
    summary = the tracker frees with the instance
    file = nova/pci/manager.py
    functions = PciDevTracker.free_instance_claims PciDevTracker._free_instance
    lacks = self._free_device(_)

    [series]
    1 = one
    2 = two
    ''')


def line_section(name, version, sha256, patches, extra=''):
    """A line's section of bases.ini."""
    return textwrap.dedent('''\

        [%s]
        nova = %s
        sha256 = %s
        python = python3
        placement = 1.0.0
        lock = locks/fake.txt
        patches = %s
        regression = nova.tests.test_fake
        tests = nova.tests.test_fake
        ''') % (name, version, sha256, patches) + extra


def make_sdist(path, version, files):
    """Write nova-VERSION.tar.gz with files under nova-VERSION/."""
    # a fixed gzip mtime, so that the same files give the same sdist
    with gzip.GzipFile(path, 'wb', mtime=0) as gz:
        with tarfile.open(fileobj=gz, mode='w') as tar:
            for name, text in sorted(files.items()):
                data = text.encode()
                info = tarfile.TarInfo('nova-%s/%s' % (version, name))
                info.size = len(data)
                info.mtime = 0
                tar.addfile(info, io.BytesIO(data))
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def python3_nova_deb(pkg, version, deb):
    """dpkg-deb --build of PKG, the files of python3-nova VERSION, to DEB."""
    (pkg / 'DEBIAN').mkdir()
    (pkg / 'DEBIAN' / 'control').write_text(
        'Package: python3-nova\nVersion: %s\nArchitecture: all\n'
        'Maintainer: t <t@example.org>\nDescription: t\n' % version)
    subprocess.run(['dpkg-deb', '--build', '--root-owner-group',
                    str(pkg), str(deb)], check=True,
                   stdout=subprocess.DEVNULL)
    return deb


def git(cwd, *args):
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM='1',
               GIT_CONFIG_GLOBAL=os.devnull,
               GIT_AUTHOR_NAME='t', GIT_AUTHOR_EMAIL='t@example.org',
               GIT_COMMITTER_NAME='t', GIT_COMMITTER_EMAIL='t@example.org',
               GIT_AUTHOR_DATE='2020-01-01T00:00:00+0000',
               GIT_COMMITTER_DATE='2020-01-01T00:00:00+0000')
    return subprocess.run(('git',) + args, cwd=cwd, env=env, check=True,
                          stdout=subprocess.PIPE, text=True).stdout


def make_patch(workdir, relpath, old, new, subject):
    """A git format-patch of one change to one file, as text."""
    repo = pathlib.Path(workdir)
    repo.mkdir(parents=True)
    git(repo, 'init', '-q')
    target = repo / relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(old)
    git(repo, 'add', '-A')
    git(repo, 'commit', '-qm', 'old')
    target.write_text(new)
    git(repo, 'commit', '-qam', subject + '\n\nWhy.\n\nCloses-Bug: #1860555')
    return git(repo, 'format-patch', '--stdout', '-1')


class FakeProject(fixtures.Fixture):
    """A project folder with one series, 'fake', on nova 1.0.0.

    Commits: 1 fixes claims.py, 2 fixes manager.py, 3 adds a test file.
    The sdist sits in the cache, so nothing is downloaded.
    """

    version = '1.0.0'

    def __init__(self, claims=CLAIMS, manager=MANAGER):
        super().__init__()
        self.claims = claims
        self.manager = manager

    def _setUp(self):
        self.root = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        self.useFixture(fixtures.EnvironmentVariable(
            'NOVA_FORK_ROOT', str(self.root)))
        # the user has no git identity, unless a test gives one
        self.useFixture(fixtures.EnvironmentVariable(
            'GIT_CONFIG_GLOBAL', os.devnull))
        self.useFixture(fixtures.EnvironmentVariable(
            'GIT_CONFIG_NOSYSTEM', '1'))
        for name in ('NAME', 'EMAIL'):
            self.useFixture(fixtures.EnvironmentVariable(
                'GIT_AUTHOR_%s' % name))
        work = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        cache = self.root / '.cache' / 'sdists'
        cache.mkdir(parents=True)
        self.sdist = cache / ('nova-%s.tar.gz' % self.version)
        self.sha256 = make_sdist(self.sdist, self.version, {
            'setup.cfg': '[metadata]\nname = nova\n',
            'nova/compute/claims.py': self.claims,
            'nova/pci/manager.py': self.manager,
        })
        patches = self.root / 'patches' / 'fake'
        patches.mkdir(parents=True)
        (patches / '0001-Fix-claims.patch').write_text(make_patch(
            work / 'p1', 'nova/compute/claims.py', CLAIMS, FIXED_CLAIMS,
            'Fix claims'))
        (patches / '0002-Fix-manager.patch').write_text(make_patch(
            work / 'p2', 'nova/pci/manager.py', MANAGER, FIXED_MANAGER,
            'Fix manager'))
        (patches / '0003-Add-tests.msg').write_text(
            'Add regression tests\n\nThey fail without the fixes.\n')
        test = self.root / 'nova' / 'tests' / 'test_fake.py'
        test.parent.mkdir(parents=True)
        test.write_text('# a regression test\n')
        note = self.root / 'releasenotes' / 'notes' / 'fake.yaml'
        note.parent.mkdir(parents=True)
        note.write_text('fixes:\n  - fixed\n')
        (patches / 'series').write_text(
            '# the fake series\n'
            '0001-Fix-claims.patch unit=claim-abort\n'
            '0002-Fix-manager.patch unit=free-instance '
            'releasenotes/notes/fake.yaml\n'
            '0003-Add-tests.msg nova/tests/test_fake.py\n')
        (self.root / 'bases.ini').write_text(UNITS + line_section(
            'fake', self.version, self.sha256, 'patches/fake'))

    def add_release(self, version, claims=CLAIMS, manager=MANAGER, **files):
        """A fake sdist of another release in the cache; its sha256."""
        files.update({'nova/compute/claims.py': claims,
                      'nova/pci/manager.py': manager})
        return make_sdist(self.root / '.cache' / 'sdists' /
                          ('nova-%s.tar.gz' % version), version, files)

    def append(self, text):
        bases = self.root / 'bases.ini'
        bases.write_text(bases.read_text() + text)


# nova's page on PyPI as pip reads it (PEP 691), its sdists only; the file
# says when it was recorded.
RECORDED = pathlib.Path(__file__).parent / 'data' / 'pypi-simple-nova.json'
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
            urllib.request, 'urlopen', side_effect=self._urlopen))
