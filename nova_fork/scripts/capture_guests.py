"""Run nova tests and keep every guest XML nova hands to libvirt.

Run by a line's venv python in a materialized tree (the tree is the
current folder)::

    python capture_guests.py OUTDIR TEST_NAME...

The tests run in this process, one after the other, with three methods of
nova's libvirt driver wrapped (nova's code is not changed):

* ``Host.write_instance_config`` (``defineXML``): the domain XML is written
  before the fake connection sees it, so a fake that refuses it cannot
  hide it;
* ``Guest.launch`` (``createWithFlags``): whether the fake started the
  guest defined last with that XML;
* ``Guest.attach_device``: device XML attached to a guest later.

OUTDIR gets one file a call, ``NNNN-TEST_ID.xml`` (NNNN the call's number
in the run), and ``guests.json``: a record a call (file, test, seq, kind,
uuid, of: the record of the domain an attach goes to, fake: accepted or
refused, fake_message) and the outcome of each test.  It is a script, not
part of the tool's import graph.
"""

import json
import os
import sys
import threading
import unittest

STATE = {'test': None, 'seq': 0, 'records': [], 'by_uuid': {}}
LOCK = threading.Lock()


def _uuid(xml):
    from xml.etree import ElementTree
    try:
        return ElementTree.fromstring(xml).findtext('./uuid')
    except ElementTree.ParseError:
        return None


def _record(outdir, kind, xml, uuid, of=None):
    if isinstance(xml, bytes):
        xml = xml.decode('utf-8')
    with LOCK:
        STATE['seq'] += 1
        seq = STATE['seq']
        name = '%04d-%s.xml' % (seq, STATE['test'] or 'outside-a-test')
        with open(os.path.join(outdir, name), 'w') as f:
            f.write(xml)
        record = {'file': name, 'test': STATE['test'], 'seq': seq,
                  'kind': kind, 'uuid': uuid, 'of': of,
                  'fake': 'accepted', 'fake_message': None}
        STATE['records'].append(record)
        if kind == 'define':
            STATE['by_uuid'][uuid] = record
    return record


def _refused(record, exc):
    if record is not None:
        record['fake'] = 'refused'
        record['fake_message'] = str(exc)


def install(outdir):
    """Wrap the three methods; nova must be imported by the tests first."""
    from nova.virt.libvirt import guest as libvirt_guest
    from nova.virt.libvirt import host as libvirt_host

    write_instance_config = libvirt_host.Host.write_instance_config
    launch = libvirt_guest.Guest.launch
    attach_device = libvirt_guest.Guest.attach_device

    def write_instance_config_(self, xml):
        record = _record(outdir, 'define', xml, _uuid(xml))
        try:
            guest = write_instance_config(self, xml)
        except Exception as exc:
            _refused(record, exc)
            raise
        return guest

    def _of(guest):
        try:
            return STATE['by_uuid'].get(guest.uuid)
        except Exception:
            return None

    def launch_(self, *args, **kwargs):
        try:
            return launch(self, *args, **kwargs)
        except Exception as exc:
            _refused(_of(self), exc)
            raise

    def attach_device_(self, conf, *args, **kwargs):
        defined = _of(self)
        record = _record(outdir, 'attach', conf.to_xml(),
                         defined and defined['uuid'],
                         of=defined and defined['file'])
        try:
            return attach_device(self, conf, *args, **kwargs)
        except Exception as exc:
            _refused(record, exc)
            raise

    libvirt_host.Host.write_instance_config = write_instance_config_
    libvirt_guest.Guest.launch = launch_
    libvirt_guest.Guest.attach_device = attach_device_


def _tests(suite):
    if isinstance(suite, unittest.TestSuite):
        for test in suite:
            for found in _tests(test):
                yield found
    else:
        yield suite


def _outcome(result):
    if result.errors:
        return 'error'
    if result.failures or result.unexpectedSuccesses:
        return 'fail'
    if result.skipped:
        return 'skip'
    return 'pass'


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    outdir, names = argv[0], argv[1:]
    os.makedirs(outdir)
    # the tree, as "python -m" would put it first
    sys.path.insert(0, os.getcwd())
    tests = list(_tests(unittest.TestLoader().loadTestsFromNames(names)))
    for test in tests:
        if isinstance(test, getattr(unittest.loader, '_FailedTest', ())):
            test.debug()  # raises the import error, with its traceback
    install(outdir)
    outcomes = {}
    for test in tests:
        STATE['test'] = test.id()
        result = unittest.TestResult()
        test.run(result)
        outcomes[test.id()] = _outcome(result)
        sys.stderr.write('%s ... %s\n' % (test.id(), outcomes[test.id()]))
    STATE['test'] = None
    with open(os.path.join(outdir, 'guests.json'), 'w') as f:
        json.dump({'records': STATE['records'], 'tests': outcomes}, f,
                  indent=1, sort_keys=True)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
