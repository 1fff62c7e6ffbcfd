"""Real libvirt as the referee of the guests the fake libvirt accepted.

The functional tests run on nova's fake libvirt, whose refusal of a guest
that repeats a PCI host device is an emulation.  Here the PCI hostdevs of
every captured guest (``capture``) go to real libvirt's in-process test
driver (``test:///default``) in a minimal domain, which is defined and
undefined again: libvirt says whether it takes it, and with what message
it refuses it.  The verdicts: on the pristine release libvirt refuses
exactly the guests that repeat a host device, with ``MESSAGE``, and at
least one in the tests where the release's lacking units make a guest
repeat one; on the fork it accepts every guest.

Only ``connect`` needs libvirt's Python bindings (Debian's
python3-libvirt); the rest works on any object with ``defineXML``.
"""

import collections
import re
from xml.etree import ElementTree

from nova_fork import errors

URI = 'test:///default'
# What libvirt (virDomainDefCheckDuplicateHostdev) says of a domain whose
# hostdevs repeat one: seen with libvirt 9.0.0 (Debian bookworm).
MESSAGE = 'Hostdev already exists in the domain configuration'
NAME = 'nova-fork-referee'
UUID = '1860555a-0000-4000-8000-000000000000'
ADDRESS = ('domain', 'bus', 'slot', 'function')
ACCEPTED, REFUSED = 'accepted', 'refused'


def connect(uri=URI):
    """(connection, libvirtError) of libvirt's test driver."""
    try:
        import libvirt
    except ImportError:
        raise errors.UsageError(
            "libvirt's Python bindings are missing: apt-get install "
            'python3-libvirt, and run through "tox -e libvirt" (its venv '
            "sees Debian's python3 packages)")
    # libvirt prints every error on stderr too: the verdict says them
    libvirt.registerErrorHandler(lambda ctx, err: None, None)
    try:
        return libvirt.open(uri), libvirt.libvirtError
    except libvirt.libvirtError as exc:
        raise errors.UsageError('libvirt cannot open %s: %s' % (uri, exc))


def version(conn):
    """libvirt's version, 'major.minor.micro'."""
    number = conn.getLibVersion()
    return '%d.%d.%d' % (number // 1000000, number // 1000 % 1000,
                         number % 1000)


def hostdevs(xml):
    """The host PCI addresses of the PCI hostdevs of a domain or device XML.

    Each a (domain, bus, slot, function) tuple of ints, in document order,
    repeats kept::

    >>> hostdevs("<domain><devices><hostdev mode='subsystem' type='pci'>"
    ...          "<source><address domain='0x0000' bus='0x81' slot='0x00'"
    ...          " function='0x1'/></source></hostdev></devices></domain>")
    [(0, 129, 0, 1)]
    """
    root = ElementTree.fromstring(xml)
    found = []
    # iter() takes the root too: a device XML of an attach
    for dev in root.iter('hostdev'):
        if dev.get('type') != 'pci' or \
                dev.get('mode', 'subsystem') != 'subsystem':
            continue
        address = dev.find('./source/address')
        if address is None:
            continue
        found.append(tuple(int(address.get(attr, '0'), 16)
                           for attr in ADDRESS))
    return found


def text(address):
    """'dddd:bb:ss.f' of an address tuple.

    >>> text((0, 0x81, 0, 1))
    '0000:81:00.1'
    """
    return '%04x:%02x:%02x.%x' % address


def repeats(addresses):
    """The addresses that appear more than once, sorted."""
    counts = collections.Counter(addresses)
    return sorted(a for a, n in counts.items() if n > 1)


def domain_xml(addresses, name=NAME, uuid=UUID):
    """A minimal domain for the test driver with these PCI hostdevs."""
    devices = ''.join(
        "<hostdev mode='subsystem' type='pci' managed='yes'><source>"
        "<address domain='0x%04x' bus='0x%02x' slot='0x%02x' "
        "function='0x%x'/></source></hostdev>" % a for a in addresses)
    return ("<domain type='test'><name>%s</name><uuid>%s</uuid>"
            "<memory unit='KiB'>131072</memory>"
            "<os><type arch='x86_64'>hvm</type></os>"
            "<devices>%s</devices></domain>" % (name, uuid, devices))


def ask(conn, addresses, error=Exception):
    """(ACCEPTED or REFUSED, libvirt's message): define, then undefine."""
    try:
        dom = conn.defineXML(domain_xml(addresses))
    except error as exc:
        return REFUSED, str(exc)
    dom.undefine()
    return ACCEPTED, None


Guest = collections.namedtuple('Guest', [
    'file', 'test', 'addresses', 'repeats', 'libvirt', 'message', 'fake',
    'fake_message'])


def guests(capture):
    """[(record, addresses)] of the captured calls with PCI hostdevs.

    An attach goes with the hostdevs of the domain it goes to (the record
    ``of`` names).
    """
    by_file = {r['file']: r for r in capture['records']}
    found = []
    for record in capture['records']:
        addresses = hostdevs(record['xml'])
        if not addresses:
            continue
        if record['kind'] == 'attach' and record.get('of') in by_file:
            addresses = hostdevs(by_file[record['of']]['xml']) + addresses
        found.append((record, addresses))
    return found


def judge(conn, capture, error=Exception):
    """[Guest]: libvirt's answer for each captured guest with hostdevs."""
    judged = []
    for record, addresses in guests(capture):
        answer, message = ask(conn, addresses, error)
        judged.append(Guest(
            record['file'], record['test'], addresses, repeats(addresses),
            answer, message, record['fake'], record['fake_message']))
    return judged


def problems(run, judged, must_refuse=None):
    """What keeps libvirt's answers from the verdict of run; [] if none.

    Every guest libvirt refuses repeats a host device and is refused with
    MESSAGE; every guest that repeats one is refused.  must_refuse (a
    regular expression over test ids, for the pristine release) names the
    tests of which at least one guest must be refused; None means the
    fork's rule: libvirt accepts every guest.
    """
    found = []
    for guest in judged:
        where = '%s: %s' % (run, guest.file)
        if guest.libvirt == REFUSED and not guest.repeats:
            found.append('%s repeats no device, yet libvirt refused it: %s'
                         % (where, guest.message))
        elif guest.libvirt == REFUSED and MESSAGE not in guest.message:
            found.append('%s: libvirt refused it with "%s", not "%s"' % (
                where, guest.message, MESSAGE))
        elif guest.libvirt == ACCEPTED and guest.repeats:
            found.append('%s repeats %s, yet libvirt accepted it' % (
                where, ', '.join(text(a) for a in guest.repeats)))
    if must_refuse is None:
        refused = [g.file for g in judged if g.libvirt == REFUSED]
        if refused:
            found.append('%s: libvirt refused %d guest(s): %s' % (
                run, len(refused), ', '.join(refused)))
        return found
    if must_refuse:
        # One guest at least: which of these tests repeats a device
        # depends on the order the hosts claim in (the PCI in placement
        # variants may fail for extra devices instead).
        pattern = re.compile(must_refuse)
        named = [g for g in judged if pattern.search(g.test)]
        if not named:
            found.append('%s: no guest with PCI hostdevs was captured in '
                         'the tests where a guest must repeat a device '
                         '(%s)' % (run, must_refuse))
        elif not any(g.libvirt == REFUSED for g in named):
            found.append('%s: libvirt refused no guest of the tests where '
                         'the release repeats a device (%s)' % (
                             run, ', '.join(sorted({g.test for g in named}))))
    return found


def agrees(guest):
    """Whether the fake and libvirt gave the same answer."""
    return guest.fake == guest.libvirt


def row(run, capture, judged):
    """The summary row of one run, as the table shows it."""
    refused = [g for g in judged if g.libvirt == REFUSED]
    messages = sorted({g.message.split(': ', 1)[-1] for g in refused})
    return [run, str(len(capture['records'])), str(len(judged)),
            str(len(judged) - len(refused)),
            '%d%s' % (len(refused),
                      ' (%s)' % '; '.join(messages) if messages else ''),
            '%d of %d' % (sum(map(agrees, judged)), len(judged))]


HEADER = ['run', 'guests captured', 'with PCI hostdevs', 'accepted',
          'refused (message)', 'fake agreed']


def render(rows):
    """An RST simple table of the rows under HEADER."""
    table = [HEADER] + rows
    widths = [max(len(r[i]) for r in table) for i in range(len(HEADER))]
    rule = '  '.join('=' * w for w in widths)
    fmt = '  '.join('%%-%ds' % w for w in widths)
    lines = [rule, (fmt % tuple(HEADER)).rstrip(), rule]
    lines += [(fmt % tuple(r)).rstrip() for r in rows]
    return '\n'.join(lines + [rule])


def disagreements(run, judged):
    """One line for each guest where the fake and libvirt differ."""
    return ['%s: %s: libvirt %s%s, the fake %s%s' % (
        run, g.file, g.libvirt, ' (%s)' % g.message if g.message else '',
        g.fake, ' (%s)' % g.fake_message if g.fake_message else '')
        for g in judged if not agrees(g)]
