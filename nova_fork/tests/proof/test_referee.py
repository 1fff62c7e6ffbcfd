import json
import sys
from unittest import mock

import fixtures
import testtools

from nova_fork import errors
from nova_fork.proof import capture
from nova_fork.proof import referee

DOMAIN = """\
<domain type='kvm'>
  <name>instance-00000001</name>
  <uuid>0d2bfa2b-5bde-4b5c-8d5d-0f1e3a9a3e22</uuid>
  <devices>
    <hostdev mode='subsystem' type='pci' managed='yes'>
      <source><address domain='0x0000' bus='0x81' slot='0x00'
                       function='0x1'/></source>
    </hostdev>
    <hostdev mode='subsystem' type='usb'>
      <source><address bus='1' device='2'/></source>
    </hostdev>
    <interface type='bridge'><source bridge='br0'/></interface>
    %s
  </devices>
</domain>
"""

SECOND = """<hostdev mode='subsystem' type='pci' managed='yes'>
      <source><address domain='0x0000' bus='0x%s' slot='0x00'
                       function='0x1'/></source>
    </hostdev>"""


class FakeError(Exception):
    pass


class FakeDomain(object):

    def __init__(self, conn, name):
        self.conn, self.name = conn, name

    def undefine(self):
        del self.conn.domains[self.name]


class FakeConnection(object):
    """As libvirt's test driver: refuses a domain that repeats a hostdev."""

    def __init__(self):
        self.domains = {}
        self.defined = []

    def defineXML(self, xml):
        self.defined.append(xml)
        addresses = referee.hostdevs(xml)
        if len(set(addresses)) != len(addresses):
            raise FakeError('XML error: %s' % referee.MESSAGE)
        name = xml.split('<name>')[1].split('</name>')[0]
        self.domains[name] = FakeDomain(self, name)
        return self.domains[name]


def record(file, test='t.T.test_a', kind='define', xml=DOMAIN % '',
           fake='accepted', fake_message=None, of=None):
    return {'file': file, 'test': test, 'kind': kind, 'xml': xml,
            'fake': fake, 'fake_message': fake_message, 'of': of,
            'uuid': None, 'seq': int(file[:4])}


class HostdevsTest(testtools.TestCase):

    def test_pci_hostdevs_of_a_domain(self):
        self.assertEqual([(0, 0x81, 0, 1), (0, 0x82, 0, 1)],
                         referee.hostdevs(DOMAIN % (SECOND % '82')))

    def test_repeats_are_kept(self):
        addresses = referee.hostdevs(DOMAIN % (SECOND % '81'))
        self.assertEqual([(0, 0x81, 0, 1)] * 2, addresses)
        self.assertEqual([(0, 0x81, 0, 1)], referee.repeats(addresses))
        self.assertEqual([], referee.repeats(addresses[:1]))

    def test_a_device_xml(self):
        self.assertEqual([(0, 0x82, 0, 1)],
                         referee.hostdevs(SECOND % '82'))

    def test_no_pci_hostdevs(self):
        self.assertEqual([], referee.hostdevs(
            "<domain><devices><hostdev mode='subsystem' type='usb'/>"
            "</devices></domain>"))


class DomainTest(testtools.TestCase):

    def test_minimal_domain_has_the_hostdevs(self):
        addresses = [(0, 0x81, 0, 1), (0, 0x81, 0, 1), (1, 2, 3, 4)]
        xml = referee.domain_xml(addresses)
        self.assertEqual(addresses, referee.hostdevs(xml))
        self.assertEqual(3, xml.count("managed='yes'"))
        for part in ("<domain type='test'>", '<name>%s</name>' % referee.NAME,
                     '<uuid>%s</uuid>' % referee.UUID, '>hvm</type>',
                     "domain='0x0001' bus='0x02' slot='0x03' "
                     "function='0x4'"):
            self.assertIn(part, xml)

    def test_ask_defines_then_undefines(self):
        conn = FakeConnection()
        self.assertEqual((referee.ACCEPTED, None),
                         referee.ask(conn, [(0, 1, 0, 0)], FakeError))
        self.assertEqual({}, conn.domains)
        self.assertEqual(1, len(conn.defined))

    def test_ask_gives_the_refusal(self):
        answer, message = referee.ask(
            FakeConnection(), [(0, 1, 0, 0)] * 2, FakeError)
        self.assertEqual(referee.REFUSED, answer)
        self.assertIn(referee.MESSAGE, message)

    def test_connect_without_bindings(self):
        with mock.patch.dict(sys.modules, {'libvirt': None}):
            exc = self.assertRaises(errors.UsageError, referee.connect)
        self.assertIn('apt-get install python3-libvirt', str(exc))
        self.assertIn('tox -e libvirt', str(exc))


class JudgeTest(testtools.TestCase):

    def capture(self):
        return {'records': [
            record('0001-a.xml'),
            record('0002-a.xml', xml=DOMAIN % (SECOND % '81'),
                   fake='refused', fake_message='internal error: Device '
                   '0000:81:00.1 is already in use'),
            record('0003-a.xml', xml='<domain><devices/></domain>'),
            record('0004-a.xml', kind='attach', xml=SECOND % '81',
                   of='0001-a.xml'),
        ]}

    def test_judge(self):
        judged = referee.judge(FakeConnection(), self.capture(), FakeError)
        self.assertEqual(
            [('0001-a.xml', referee.ACCEPTED, 'accepted'),
             ('0002-a.xml', referee.REFUSED, 'refused'),
             ('0004-a.xml', referee.REFUSED, 'accepted')],
            [(g.file, g.libvirt, g.fake) for g in judged])
        # the attach goes with the hostdevs of its domain
        self.assertEqual([(0, 0x81, 0, 1)] * 2, judged[2].addresses)
        self.assertEqual(
            ['pristine: 0004-a.xml: libvirt refused (XML error: Hostdev '
             'already exists in the domain configuration), the fake '
             'accepted'], referee.disagreements('pristine', judged))

    def test_row_and_render(self):
        capture = self.capture()
        judged = referee.judge(FakeConnection(), capture, FakeError)
        row = referee.row('pristine', capture, judged)
        self.assertEqual(['pristine', '4', '3', '1', '2 (%s)' %
                          referee.MESSAGE, '2 of 3'], row)
        table = referee.render([row])
        self.assertIn('fake agreed', table.splitlines()[1])
        self.assertTrue(table.splitlines()[3].startswith('pristine  4'))


def guest(file, addresses, answer, message=None, test='t.T.test_a'):
    return referee.Guest(file, test, addresses, referee.repeats(addresses),
                         answer, message, answer, None)


class ProblemsTest(testtools.TestCase):

    refused = 'XML error: %s' % referee.MESSAGE
    one, two = [(0, 1, 0, 0)], [(0, 1, 0, 0)] * 2

    def test_pristine_ok(self):
        judged = [guest('1', self.one, referee.ACCEPTED),
                  guest('2', self.two, referee.REFUSED, self.refused)]
        self.assertEqual([], referee.problems('pristine', judged, 'test_a'))

    def test_pristine_without_a_refusal_where_one_must_be(self):
        judged = [guest('1', self.one, referee.ACCEPTED)]
        self.assertEqual(
            ['pristine: libvirt refused no guest of the tests where the '
             'release repeats a device (t.T.test_a)'],
            referee.problems('pristine', judged, 'test_a'))
        self.assertIn('no guest with PCI hostdevs was captured',
                      referee.problems('pristine', judged, 'test_b')[0])
        # no test where the release repeats a device: nothing required
        self.assertEqual([], referee.problems('pristine', judged, ''))

    def test_refused_for_another_reason(self):
        judged = [guest('1', self.one, referee.REFUSED, 'busy'),
                  guest('2', self.two, referee.REFUSED, 'other')]
        self.assertEqual(
            ['pristine: 1 repeats no device, yet libvirt refused it: busy',
             'pristine: 2: libvirt refused it with "other", not "%s"' %
             referee.MESSAGE],
            referee.problems('pristine', judged, ''))

    def test_a_repeat_accepted(self):
        judged = [guest('2', self.two, referee.ACCEPTED)]
        self.assertEqual(
            ['fork: 2 repeats 0000:01:00.0, yet libvirt accepted it'],
            referee.problems('fork', judged))

    def test_fork_accepts_every_guest(self):
        self.assertEqual([], referee.problems(
            'fork', [guest('1', self.one, referee.ACCEPTED)]))
        self.assertEqual(
            ['fork: libvirt refused 1 guest(s): 2'],
            referee.problems('fork', [
                guest('2', self.two, referee.REFUSED, self.refused)]))


class LoadTest(testtools.TestCase):

    def test_load_reads_the_xml(self):
        out = self.useFixture(fixtures.TempDir()).path
        with open(out + '/0001-t.xml', 'w') as f:
            f.write('<domain/>')
        with open(out + '/' + capture.INDEX, 'w') as f:
            json.dump({'records': [record('0001-t.xml', xml=None)],
                       'tests': {'t.T.test_a': 'pass'}}, f)
        taken = capture.load(out)
        self.assertEqual('<domain/>', taken['records'][0]['xml'])
        self.assertEqual(out, taken['folder'])
