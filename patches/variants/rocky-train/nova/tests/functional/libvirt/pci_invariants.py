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

"""PCI passthrough helpers for libvirt functional tests (rocky to train).

This module provides what the fake libvirt and functional test helpers of
nova 18 to 20 (rocky, stein, train) do not:

* ``HostPCIDevicesInfo``: plain (type-PCI) host devices at any address.
  Their ``fakelibvirt`` only knows devices at fixed addresses on bus 0x81
  (rocky: SR-IOV PFs and VFs only).

* ``StrictPCIConnection``: a fake libvirt connection that, like the real
  libvirt, refuses to start a guest whose PCI hostdevs repeat a host PCI
  address or use a host PCI address that another domain of the same
  connection already uses (``Device 0000:81:00.0 is already in use``). The
  stock fake libvirt silently ignores PCI hostdevs. It also reports its own
  hostname so that several computes get distinct nodes (the stock fake
  connection reports ``compute1`` unless told otherwise).

* ``PCIInvariantsMixin``: a test mixin for
  ``nova.tests.functional.test_servers.ServersTestBase`` based tests that
  replaces libvirt with the fake one (as stein's and train's libvirt
  functional base does, which rocky lacks), starts libvirt computes each
  with its own ``StrictPCIConnection`` (``start_compute()``; none of the
  three has it), and provides
  ``assert_pci_invariants()`` which cross checks, over every started compute
  host, the PCI view of the DB, of the resource tracker, of the hypervisor
  (the guest XMLs) and of placement.
"""

import collections
import io
from xml.etree import ElementTree as etree

import fixtures
import mock

from nova import context as nova_context
from nova import objects
from nova.objects import fields
from nova.tests.unit.virt.libvirt import fake_imagebackend
from nova.tests.unit.virt.libvirt import fakelibvirt

try:
    # rocky and stein; train replaced it with mocks of libvirt_utils.
    from nova.tests.unit.virt.libvirt import fake_libvirt_utils
except ImportError:
    fake_libvirt_utils = None

PCI_VEND_ID = '8086'
PCI_PROD_ID = '1533'
PCI_PROD_NAME = 'I210 Gigabit Network Connection'

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
    candidates = []
    if root.tag in ('hostdev', 'interface'):
        candidates.append(root)
    candidates.extend(root.iter('hostdev'))
    candidates.extend(root.iter('interface'))

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


class FakePCIDevice(object):
    """A plain PCI device (type-PCI) as a libvirt node device."""

    template = """<device>
  <name>%(name)s</name>
  <path>/sys/devices/pci0000:00/0000:00:01.0/%(address)s</path>
  <parent>pci_0000_00_01_0</parent>
  <driver>
    <name>igb</name>
  </driver>
  <capability type='pci'>
    <domain>0</domain>
    <bus>%(bus)d</bus>
    <slot>%(slot)d</slot>
    <function>%(function)d</function>
    <product id='0x%(prod)s'>%(prod_name)s</product>
    <vendor id='0x%(vend)s'>Intel Corporation</vendor>
    <iommuGroup number='%(iommu_group)d'>
      <address domain='0x0000' bus='%(bus)#04x' slot='%(slot)#04x'
               function='%(function)#03x'/>
    </iommuGroup>
    <numa node='%(numa_node)d'/>
    <pci-express>
      <link validity='cap' port='0' speed='5' width='8'/>
      <link validity='sta' speed='5' width='8'/>
    </pci-express>
  </capability>
</device>"""

    def __init__(self, bus, slot, function, iommu_group, numa_node):
        self.address = PCI_ADDRESS_FMT % (0, bus, slot, function)
        self.name = 'pci_0000_%02x_%02x_%x' % (bus, slot, function)
        self.xml = self.template % {
            'name': self.name, 'address': self.address, 'bus': bus,
            'slot': slot, 'function': function, 'prod': PCI_PROD_ID,
            'prod_name': PCI_PROD_NAME, 'vend': PCI_VEND_ID,
            'iommu_group': iommu_group, 'numa_node': numa_node}

    def XMLDesc(self, flags):
        return self.xml


class HostPCIDevicesInfo(object):
    """The plain PCI devices of a fake host, at the addresses given."""

    def __init__(self):
        self.devices = collections.OrderedDict()

    def add_device(self, bus, slot, function=0, iommu_group=None,
                   numa_node=0):
        dev = FakePCIDevice(
            bus, slot, function,
            iommu_group if iommu_group is not None else 40 + slot,
            numa_node)
        self.devices[dev.name] = dev
        return dev

    def get_all_devices(self):
        return list(self.devices)

    def get_device_by_name(self, device_name):
        return self.devices.get(device_name)


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

    def __init__(self, hostname, host_info=None, pci_info=None):
        super(StrictPCIConnection, self).__init__(
            'qemu:///system', version=fakelibvirt.FAKE_LIBVIRT_VERSION,
            hv_version=fakelibvirt.FAKE_QEMU_VERSION, host_info=host_info,
            pci_info=pci_info)
        self.hostname = hostname

    def getHostname(self):
        return self.hostname

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
    """Libvirt computes with strict fake PCI hosts and PCI invariant checks.

    To be mixed into a ``nova.tests.functional.test_servers.ServersTestBase``
    based test class (before it in the MRO). The compute service of the base
    class is not started; the test starts libvirt computes with
    ``start_compute()``, each with its own ``StrictPCIConnection``.
    """

    def setUp(self):
        super(PCIInvariantsMixin, self).setUp()
        self.flags(compute_driver='libvirt.LibvirtDriver')
        # Replace libvirt with fakelibvirt, as the libvirt functional base of
        # stein and train does.
        if fake_libvirt_utils is not None:
            self.useFixture(fixtures.MonkeyPatch(
                'nova.virt.libvirt.driver.libvirt_utils', fake_libvirt_utils))
        else:
            # train: fake image backends (rocky's fixture lacks what
            # confirming a resize needs, SUPPORTS_CLONE) and the file
            # helpers of the real libvirt_utils mocked.
            self.useFixture(fake_imagebackend.ImageBackendFixture())
            self.useFixture(fixtures.MockPatch(
                'nova.virt.libvirt.driver.libvirt_utils.is_valid_hostname',
                return_value=True))
            self.useFixture(fixtures.MockPatch(
                'nova.virt.libvirt.driver.libvirt_utils.file_open',
                side_effect=lambda *a, **k: io.BytesIO(b'')))
        self.useFixture(fakelibvirt.FakeLibvirtFixture())
        # There is no image to download and convert
        self.useFixture(fixtures.MockPatch(
            'nova.virt.libvirt.LibvirtDriver._create_image',
            return_value=(False, False)))
        self.useFixture(fixtures.MockPatch(
            'nova.virt.libvirt.LibvirtDriver._get_local_gb_info',
            return_value={'total': 128, 'used': 44, 'free': 84}))
        self.useFixture(fixtures.MockPatch(
            'nova.privsep.utils.supports_direct_io', return_value=True))
        self.useFixture(fixtures.MockPatch(
            'nova.virt.libvirt.host.Host.get_online_cpus',
            return_value=set(range(16))))

    def _setup_compute_service(self):
        # The computes are started by the tests, see start_compute().
        pass

    def start_compute(self, hostname, host_info, pci_info):
        """Start a libvirt compute whose hypervisor is a strict fake one."""
        conn = StrictPCIConnection(
            hostname, host_info=host_info, pci_info=pci_info)
        with mock.patch('nova.virt.libvirt.host.Host.get_connection',
                        return_value=conn):
            compute = self.start_service('compute', host=hostname)
        # Once the compute is started, keep its driver on its connection.
        compute.driver._host.get_connection = lambda: conn
        self.computes[hostname] = compute
        return hostname

    def restart_compute(self, hostname):
        """Restart the compute of hostname, with its driver and guests.

        Rocky restarts the service in place; stein and train start a new
        one, with the driver of the old one.
        """
        compute = self.restart_compute_service(self.computes[hostname])
        if compute is not None:
            self.computes[hostname] = compute
        return self.computes[hostname]

    # helpers

    def _pci_fail(self, problems):
        self.fail(
            'PCI device invariants violated:\n  %s' % '\n  '.join(problems))

    def _placement_consumer_allocations(self, consumer):
        return self.placement_api.get(
            '/allocations/%s' % consumer, version='1.28'
        ).body['allocations']

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
          runs on (rocky does not track PCI devices in placement).

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
            manager = self.computes[hostname].manager
            # train keeps the resource tracker in ComputeManager.rt
            rt = getattr(manager, 'rt', None) or (
                manager._get_resource_tracker())
            tracker = rt.pci_tracker
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
        """Placement allocations are against the instance's host only."""
        problems = []
        host_of_rp = {
            cn.uuid: hostname for hostname, cn in state.nodes.items()}
        for inst in state.instances.values():
            for rp_uuid in self._placement_consumer_allocations(inst.uuid):
                hostname = host_of_rp.get(rp_uuid, rp_uuid)
                if inst.host is None or hostname != inst.host:
                    problems.append(
                        'Placement allocation of instance %s (%s, PCI devices '
                        '%s) against the compute node of host %s but the '
                        'instance runs on host %s' % (
                            inst.uuid, inst.vm_state,
                            [d.address for d in inst.pci_devices],
                            hostname, inst.host))
        return problems


_HELD = (fields.PciDeviceStatus.ALLOCATED, fields.PciDeviceStatus.CLAIMED)


class _PCIState(object):
    """The PCI view of the DB and of the hypervisors, host by host."""

    def __init__(self, instances, nodes, node_hosts, devices, guests):
        self.instances = instances
        self.nodes = nodes
        self.node_hosts = node_hosts
        self.devices = devices
        self.guests = guests
