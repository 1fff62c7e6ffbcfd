#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.

"""PCI passthrough helpers for libvirt functional tests.

This module provides two things that the stock fake libvirt and the stock
functional test helpers do not:

* ``StrictPCIConnection``: a fake libvirt connection that, like the real
  libvirt, refuses to start a guest whose PCI hostdevs repeat a host PCI
  address or use a host PCI address that another domain of the same
  connection already uses (``Device 0000:81:00.0 is already in use``). The
  stock fake libvirt silently ignores PCI hostdevs.

* ``PCIInvariantsMixin``: a test mixin that wires the strict connection into
  the libvirt functional test base (``pci_adapter.ServersTestBase``) and
  provides ``assert_pci_invariants()`` which cross checks, over every
  started compute host, the PCI view of the DB, of the resource tracker, of
  the hypervisor (the guest XMLs) and of placement.

It is meant to be reused by any PCI functional test, for example the ones
that move servers with PCI devices between hosts. It runs on every nova
release the fork serves, Python 2.7 included.
"""

import collections
from xml.etree import ElementTree as etree

from nova import context as nova_context
from nova import objects
from nova.objects import fields
from nova.tests.functional.libvirt import pci_adapter

fakelibvirt = pci_adapter.fakelibvirt

PCI_ADDRESS_FMT = '%04x:%02x:%02x.%x'


def pci_address_from_element(address):
    """Return the 'dddd:bb:ss.f' form of a libvirt <address type='pci'/>."""
    return PCI_ADDRESS_FMT % tuple(
        int(address.get(attr, '0'), 16)
        for attr in ('domain', 'bus', 'slot', 'function'))


def get_pci_hostdev_addresses(xml):
    """Return the host PCI addresses a libvirt domain (or device) XML uses.

    Both ``<hostdev type='pci'>`` (flavor based PCI passthrough) and
    ``<interface type='hostdev'>`` (SR-IOV neutron ports) are considered. The
    list keeps duplicates on purpose.
    """
    root = etree.fromstring(xml)
    # iter() yields the root too: a device XML is one device, not two
    candidates = list(root.iter('hostdev')) + list(root.iter('interface'))

    addresses = []
    for dev in candidates:
        if dev.tag == 'hostdev' and dev.get('type') != 'pci':
            continue
        if dev.tag == 'interface' and dev.get('type') != 'hostdev':
            continue
        address = dev.find('./source/address')
        if address is None or address.get('type', 'pci') != 'pci':
            continue
        addresses.append(pci_address_from_element(address))
    return addresses


def _already_in_use(address):
    # This is the message the real libvirt (virHostdevPreparePCIDevices)
    # gives when a PCI device is requested a second time.
    return fakelibvirt.make_libvirtError(
        fakelibvirt.libvirtError,
        'internal error: Device %s is already in use' % address,
        error_code=fakelibvirt.VIR_ERR_INTERNAL_ERROR,
        error_domain=fakelibvirt.VIR_FROM_QEMU)


class StrictPCIDomain(fakelibvirt.Domain):
    """A fake libvirt domain that remembers the PCI hostdevs of its XML."""

    def __init__(self, connection, xml, running=False, transient=False):
        self.defined_xml = xml
        self.pci_hostdevs = get_pci_hostdev_addresses(xml)
        if running:
            connection.check_pci_hostdevs(self.pci_hostdevs, xml=xml)
        super(StrictPCIDomain, self).__init__(
            connection, xml, running=running, transient=transient)

    def createWithFlags(self, flags):
        self._connection.check_pci_hostdevs(
            self.pci_hostdevs, uuid=self.UUIDString())
        super(StrictPCIDomain, self).createWithFlags(flags)

    def attachDevice(self, xml):
        addresses = get_pci_hostdev_addresses(xml)
        if not addresses:
            return super(StrictPCIDomain, self).attachDevice(xml)
        self._connection.check_pci_hostdevs(
            self.pci_hostdevs + addresses, uuid=self.UUIDString())
        self.pci_hostdevs.extend(addresses)
        return True

    def detachDevice(self, xml):
        addresses = get_pci_hostdev_addresses(xml)
        if not addresses:
            return super(StrictPCIDomain, self).detachDevice(xml)
        for address in addresses:
            if address in self.pci_hostdevs:
                self.pci_hostdevs.remove(address)
        return True


class StrictPCIConnection(fakelibvirt.Connection):
    """A fake libvirt connection that refuses a PCI device used twice.

    Real libvirt refuses to start a guest if one of its PCI hostdevs is
    already used, either by the same guest (the same address twice in its
    XML) or by another guest of the hypervisor, with::

        libvirtError: internal error: Device 0000:81:00.0 is already in use

    The stock fake connection ignores PCI hostdevs altogether, so a guest with
    a device it must not have silently boots. This connection behaves like
    the real one. It is stricter than libvirt in one way: a device used by a
    *defined* but stopped domain is also considered in use, as nova considers
    such a device to be allocated to the stopped instance.
    """

    @classmethod
    def from_connection(cls, conn):
        """The strict twin of a new fake connection: its host and devices.

        The fake connections of the nova releases differ in what they are
        made with; the twin takes the state of the one nova made.
        """
        strict = cls.__new__(cls)
        strict.__dict__.update(vars(conn))
        return strict

    def _domains(self):
        domains = {id(dom): dom for dom in self._vms.values()}
        domains.update(
            {id(dom): dom for dom in self._running_vms.values()})
        return list(domains.values())

    def check_pci_hostdevs(self, addresses, uuid=None, xml=None):
        if uuid is None and xml is not None:
            uuid = etree.fromstring(xml).findtext('./uuid')
        seen = set()
        for address in addresses:
            if address in seen:
                raise _already_in_use(address)
            seen.add(address)
        for dom in self._domains():
            if dom.UUIDString() == uuid:
                continue
            for address in getattr(dom, 'pci_hostdevs', []):
                if address in seen:
                    raise _already_in_use(address)

    def defineXML(self, xml):
        dom = StrictPCIDomain(
            connection=self, running=False, transient=False, xml=xml)
        self._vms[dom.name()] = dom
        self._emit_lifecycle(dom, fakelibvirt.VIR_DOMAIN_EVENT_DEFINED, 0)
        return dom

    def createXML(self, xml, flags):
        dom = StrictPCIDomain(
            connection=self, running=True, transient=True, xml=xml)
        self._vms[dom.name()] = dom
        self._emit_lifecycle(dom, fakelibvirt.VIR_DOMAIN_EVENT_STARTED, 0)
        return dom

    def get_guest_pci_hostdevs(self):
        """Return {instance uuid: [host PCI addresses]} of every guest."""
        return {
            dom.UUIDString(): sorted(getattr(dom, 'pci_hostdevs', []))
            for dom in self._domains()
        }


class PCIInvariantsMixin(object):
    """Strict PCI hypervisor and PCI invariant checks for libvirt tests.

    To be mixed into a ``pci_adapter.ServersTestBase`` based test class
    (before it in the MRO). Every compute started by ``start_compute()``
    gets a ``StrictPCIConnection``. The test class says whether it reports
    PCI devices to placement (``PCI_IN_PLACEMENT``) and how to reach the
    resource tracker of a host (``_resource_tracker()``).
    """

    PCI_IN_PLACEMENT = False

    def _get_connection(self, *args, **kwargs):
        conn = super(PCIInvariantsMixin, self)._get_connection(
            *args, **kwargs)
        return StrictPCIConnection.from_connection(conn)

    # helpers

    def _pci_fail(self, problems):
        self.fail(
            'PCI device invariants violated:\n  %s' % '\n  '.join(problems))

    def _placement_consumer_allocations(self, consumer):
        return self.placement.get(
            '/allocations/%s' % consumer, version='1.28'
        ).body['allocations']

    def _placement_rp_tree(self, node):
        # The resource provider of a compute node has the node's uuid.
        return self.placement.get(
            '/resource_providers?in_tree=%s' % node.uuid,
            version='1.14').body['resource_providers']

    # the checker

    def assert_pci_invariants(self):
        """Check the PCI invariants over every compute host.

        * no PCI device is held by two instances;
        * every PCI device an instance holds is on the compute node it runs
          on, and an instance that runs nowhere holds none;
        * each guest's PCI hostdevs are exactly the instance's PCI devices;
        * the free PCI devices are back in the pools: the resource tracker's
          pools and the compute node's pci_device_pools agree with the DB;
        * placement agrees: allocations only against the host the instance
          runs on, and, with PCI in placement, the PCI resource provider
          usages match the allocated devices.

        Fails with a message listing every violation found.
        """
        ctxt = nova_context.get_admin_context()
        state = _PCIState(
            instances={
                inst.uuid: inst for inst in objects.InstanceList.get_all(
                    ctxt, expected_attrs=['pci_devices'])},
            nodes={}, node_hosts={}, devices={}, guests={})
        for hostname in sorted(self.computes):
            cn = objects.ComputeNode.get_by_host_and_nodename(
                ctxt, hostname, hostname)
            state.nodes[hostname] = cn
            state.node_hosts[cn.id] = hostname
            state.devices[hostname] = (
                objects.PciDeviceList.get_by_compute_node(ctxt, cn.id))
            conn = self.computes[hostname].driver._host.get_connection()
            state.guests[hostname] = conn.get_guest_pci_hostdevs()

        problems = (
            self._check_pci_holders(state) +
            self._check_pci_guests(state) +
            self._check_pci_pools(state) +
            self._check_pci_placement(state))
        if problems:
            self._pci_fail(problems)

    def _check_pci_holders(self, state):
        """No device held twice; held devices are on the instance's host."""
        problems = []
        holders = collections.defaultdict(set)
        for hostname, devs in state.devices.items():
            for dev in devs:
                if dev.status in _HELD:
                    holders[(hostname, dev.address)].add(dev.instance_uuid)
        for inst in state.instances.values():
            for dev in inst.pci_devices:
                where = state.node_hosts.get(dev.compute_node_id, '?')
                holders[(where, dev.address)].add(inst.uuid)
                if inst.host is None or where != inst.host:
                    problems.append(
                        'PCI device %s of host %s is held by instance %s '
                        '(%s) that runs on host %s' % (
                            dev.address, where, inst.uuid, inst.vm_state,
                            inst.host))
        for hostname, guests in state.guests.items():
            for uuid, addrs in guests.items():
                for addr in addrs:
                    holders[(hostname, addr)].add(uuid)
        for (hostname, addr), uuids in sorted(holders.items()):
            if len(uuids) > 1:
                problems.append(
                    'PCI device %s on host %s is held by more than one '
                    'instance: %s' % (addr, hostname, sorted(uuids)))
        return problems

    def _check_pci_guests(self, state):
        """Each guest's hostdevs are exactly the instance's devices."""
        problems = []
        for hostname, guests in sorted(state.guests.items()):
            expected = collections.defaultdict(list)
            for dev in state.devices[hostname]:
                if dev.status == fields.PciDeviceStatus.ALLOCATED:
                    expected[dev.instance_uuid].append(dev.address)
            for uuid in sorted(set(guests) | set(expected)):
                problem = self._check_pci_guest(
                    hostname, state.instances.get(uuid), uuid,
                    guests.get(uuid), sorted(expected.get(uuid, [])))
                if problem:
                    problems.append(problem)
            for inst in state.instances.values():
                if (inst.host == hostname and inst.uuid not in guests and
                        inst.vm_state == 'active'):
                    problems.append(
                        'PCI device check: instance %s is active on host %s '
                        'but has no guest there' % (inst.uuid, hostname))
        return problems

    @staticmethod
    def _check_pci_guest(hostname, inst, uuid, got, want):
        if got is None:
            return want and (
                'PCI devices %s on host %s are allocated to instance %s that '
                'has no guest there' % (want, hostname, uuid))
        if inst is None or inst.host != hostname:
            return (
                'PCI device check: host %s runs a guest %s that is not an '
                'instance of that host (instance host: %s) with PCI devices '
                '%s' % (hostname, uuid, inst and inst.host, got))
        if got != want:
            extra = sorted(
                (collections.Counter(got) - collections.Counter(want)
                 ).elements())
            missing = sorted(
                (collections.Counter(want) - collections.Counter(got)
                 ).elements())
            return (
                'PCI devices of the guest of instance %s on host %s are %s '
                'but the instance has PCI devices %s (extra PCI device '
                'hostdevs: %s, missing: %s)' % (
                    uuid, hostname, got, want, extra, missing))

    def _check_pci_pools(self, state):
        """Free devices are back in the pools of the RT and compute node."""
        problems = []
        for hostname, devs in sorted(state.devices.items()):
            db_free = sorted(
                dev.address for dev in devs
                if dev.status == fields.PciDeviceStatus.AVAILABLE)
            tracker = self._resource_tracker(hostname).pci_tracker
            if tracker is None:
                if db_free:
                    problems.append(
                        'PCI devices %s on host %s are free in the DB but '
                        'the host has no PCI tracker' % (db_free, hostname))
                continue
            rt_free = sorted(
                dev.address for pool in tracker.stats.pools
                for dev in pool['devices'])
            rt_count = sum(pool['count'] for pool in tracker.stats.pools)
            if rt_free != db_free or rt_count != len(db_free):
                problems.append(
                    'PCI device pools of the resource tracker of host %s '
                    'hold %d free devices %s but the DB has free PCI devices '
                    '%s' % (hostname, rt_count, rt_free, db_free))
            tracked = sorted(
                (dev.address, dev.status, dev.instance_uuid)
                for dev in tracker.pci_devs)
            in_db = sorted(
                (dev.address, dev.status, dev.instance_uuid) for dev in devs)
            if tracked != in_db:
                problems.append(
                    'PCI devices tracked by the resource tracker of host %s '
                    '%s differ from the DB PCI devices %s' % (
                        hostname, tracked, in_db))
            pools = state.nodes[hostname].pci_device_pools or []
            cn_count = sum(pool.count for pool in pools)
            if cn_count != len(db_free):
                problems.append(
                    'PCI device pools of compute node %s count %d free '
                    'devices but the DB has %d free PCI devices %s' % (
                        hostname, cn_count, len(db_free), db_free))
        return problems

    def _check_pci_placement(self, state):
        """Placement allocations and PCI usages agree with the DB."""
        problems = []
        rps = {}
        host_of_rp = {}
        for hostname in sorted(self.computes):
            rps[hostname] = self._placement_rp_tree(state.nodes[hostname])
            for rp in rps[hostname]:
                host_of_rp[rp['uuid']] = (hostname, rp['name'])
        for inst in state.instances.values():
            for rp_uuid in self._placement_consumer_allocations(inst.uuid):
                hostname, rp_name = host_of_rp.get(rp_uuid, ('?', rp_uuid))
                if inst.host is None or hostname != inst.host:
                    problems.append(
                        'Placement allocation of instance %s (%s, PCI devices '
                        '%s) against provider %s of host %s but the instance '
                        'runs on host %s' % (
                            inst.uuid, inst.vm_state,
                            [d.address for d in inst.pci_devices], rp_name,
                            hostname, inst.host))
        if not self.PCI_IN_PLACEMENT:
            return problems
        for hostname, devs in sorted(state.devices.items()):
            allocated = collections.defaultdict(set)
            for dev in devs:
                if dev.status in _HELD:
                    rp_addr = dev.address
                    if dev.dev_type == fields.PciDeviceType.SRIOV_VF:
                        rp_addr = dev.parent_addr
                    allocated['%s_%s' % (hostname, rp_addr)].add(
                        dev.instance_uuid)
            for rp in rps[hostname]:
                if rp['uuid'] == state.nodes[hostname].uuid:
                    continue
                consumers = set(self.placement.get(
                    '/resource_providers/%s/allocations' % rp['uuid'],
                    version='1.14').body['allocations'])
                want = allocated.get(rp['name'], set())
                if consumers != want:
                    problems.append(
                        'Placement PCI device provider %s is consumed by %s '
                        'but the DB allocates the PCI device to %s' % (
                            rp['name'], sorted(consumers), sorted(want)))
        return problems


_HELD = (fields.PciDeviceStatus.ALLOCATED, fields.PciDeviceStatus.CLAIMED)


# The PCI view of the DB and of the hypervisors, host by host.
_PCIState = collections.namedtuple(
    '_PCIState', 'instances nodes node_hosts devices guests')
