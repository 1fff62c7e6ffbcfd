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

"""The functional test API of nova 21 to 23 (ussuri to wallaby), for the PCI
test suite.

See the shared module of the same name (nova 28 on). Here, unlike there: the
fake libvirt is nova.tests.unit.virt.libvirt.fakelibvirt, its kB_mem is the
MiB of the host and the type-PCI devices of nova 21 and 22 are all on bus
0x81; nova 21 calls placement placement_api; notifications go to
nova.tests.unit.fake_notifier; compute services are restarted by service;
RPC casts are always calls (CastAsCall); PCI devices are whitelisted with
[pci]passthrough_whitelist and not tracked in placement; the API cannot
unshelve to a given host (2.91); prep_resize checks the server group policy
only from a stable release of each series on (not in 21.0.0, 22.0.0 or
23.0.0). For the live migrations (LiveMigrationTestBase), as in nova 24 to
26: flavor-based PCI devices do not live migrate (nova 31 on) and the last
step of the destination's check after its claims is the update of the
ports' profiles; here also: the SR-IOV test base has no live migration stub
(nor, before 23, the second and third SR-IOV port of the neutron fixture),
the fake libvirt of 21 and 22 puts every PCI device on bus 0x81, its
domains show every SR-IOV port at 0000:81:00.1 and keep one that nova
detaches, nova 21's test helpers cannot
reboot a server, and the source of a live migration whose pre_live_migration
fails attaches its SR-IOV ports a second time (see ROLLBACK_FAILS_IN).
"""

import copy
import inspect
from urllib import parse as urlparse
from xml.etree import ElementTree as etree

import fixtures

from nova.compute import manager
import nova.conf
from nova.tests.functional import integrated_helpers
from nova.tests.functional.libvirt import base
from nova.tests.functional.libvirt import test_pci_sriov_servers
from nova.tests.unit import fake_notifier
from nova.tests.unit.virt.libvirt import fake_imagebackend
from nova.tests.unit.virt.libvirt import fake_os_brick_connector
from nova.tests.unit.virt.libvirt import fakelibvirt

__all__ = ['fakelibvirt', 'ServersTestBase', 'LiveMigrationTestBase']

CONF = nova.conf.CONF


class _Notifier(object):
    """self.notifier of later nova, over nova.tests.unit.fake_notifier."""

    @property
    def versioned_notifications(self):
        return fake_notifier.VERSIONED_NOTIFICATIONS

    @staticmethod
    def wait_for_versioned_notifications(event_type):
        return fake_notifier.wait_for_versioned_notifications(
            event_type, timeout=10.0)


def _prep_resize_checks_group_policy():
    """Whether the destination's prep_resize checks the group policy."""
    prep_resize = inspect.unwrap(manager.ComputeManager.prep_resize)
    return '_validate_instance_group_policy' in inspect.getsource(prep_resize)


def _disk_without_direct_snapshot(real):
    """ImageBackendFixture._mock_disk, whose disks cannot direct_snapshot.

    As nova 23's fake image backend has it: the snapshot of a shelve then
    falls back to extracting the disk. nova 21 and 22's fake returns a mock
    as the image location, which the fake glance cannot copy on unshelve.
    """
    def _mock_disk(fixture):
        disk = real(fixture)
        disk.direct_snapshot.side_effect = NotImplementedError(
            'direct_snapshot() is not implemented')
        return disk
    return _mock_disk


class ServersTestBase(base.ServersTestBase):

    CAST_AS_CALL_FIXTURE = 'nova.tests.unit.cast_as_call.CastAsCall'
    PCI_DEVICE_SPEC_OPTION = 'passthrough_whitelist'
    HAS_PCI_IN_PLACEMENT = False
    HAS_LATE_CHECK_IN_PREP_RESIZE = _prep_resize_checks_group_policy()
    HAS_UNSHELVE_TO_HOST = False

    def setUp(self):
        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.unit.virt.libvirt.fake_imagebackend.'
            'ImageBackendFixture._mock_disk',
            _disk_without_direct_snapshot(
                fake_imagebackend.ImageBackendFixture._mock_disk)))
        super(ServersTestBase, self).setUp()
        self.notifier = _Notifier()
        if not hasattr(self, 'placement'):
            self.placement = self.placement_api
        self.computes = {}

    def restart_compute_service(self, hostname):
        compute = super(ServersTestBase, self).restart_compute_service(
            self.computes[hostname])
        self.computes[hostname] = compute
        return compute

    def _fake_host_info(self, ram_mb):
        host_info = fakelibvirt.HostInfo(
            cpu_nodes=1, cpu_sockets=1, cpu_cores=4, cpu_threads=1,
            kB_mem=ram_mb)
        # its NUMA cells take their memory from kB_mem, the MiB here
        host_info.numa_topology = fakelibvirt.NUMATopology(
            cpu_nodes=1, cpu_sockets=1, cpu_cores=4, cpu_threads=1,
            kb_mem=ram_mb * 1024)
        return host_info

    def _fake_pci_info(self, devices):
        pci_info = fakelibvirt.HostPCIDevicesInfo(
            num_pci=0, num_pfs=0, num_vfs=0)
        if hasattr(pci_info, 'add_device'):
            return super(ServersTestBase, self)._fake_pci_info(devices)
        # nova 21 and 22: give the XML of a device the bus asked for.
        for bus, slot in devices:
            _add_device(pci_info, bus, dev_type='PCI', slot=slot, function=0,
                        iommu_group=40 + slot, numa_node=0)
        return pci_info


def _add_device(pci_info, bus, **kwargs):
    """HostPCIDevicesInfo.add_device() of nova 23 on, for nova 21 and 22.

    Their fake puts every device on bus 0x81: the XML of the device gets
    the bus asked for.
    """
    dev = fakelibvirt.FakePCIDevice(**kwargs)
    dev.pci_device = (
        dev.pci_device.replace('pci_0000_81_', 'pci_0000_%02x_' % bus)
        .replace('0000:81:', '0000:%02x:' % bus)
        .replace('<bus>129</bus>', '<bus>%d</bus>' % bus)
        .replace("bus='0x81'", "bus='%#04x'" % bus))
    pci_info.devices['pci_0000_%02x_%02x_%d' % (
        bus, kwargs['slot'], kwargs['function'])] = dev


class _LibvirtNeutronFixture(base.LibvirtNeutronFixture):
    """The neutron of the libvirt tests, with three SR-IOV ports.

    nova 21 and 22 have the first only: the others are copies of it. Their
    port bindings for a host have no VIF type, which the destination of a
    live migration plugs: nova 23's have the port's.
    """

    def create_port_binding(self, context, client, port_id, data):
        if port_id in self._ports:
            data = copy.deepcopy(data)
            data['binding'].update(
                (key, self._ports[port_id]['binding:' + key])
                for key in ('vif_type', 'vif_details', 'vnic_type'))
        return super(_LibvirtNeutronFixture, self).create_port_binding(
            context, client, port_id, data)

    if not hasattr(base.LibvirtNeutronFixture, 'network_4_port_2'):
        network_4_port_2 = dict(
            base.LibvirtNeutronFixture.network_4_port_1,
            id='4a0e3b05-4704-4adb-bfb1-f31f0e4d1bdc',
            mac_address='b5:bc:2e:e7:51:ef',
            fixed_ips=[dict(
                base.LibvirtNeutronFixture.network_4_port_1['fixed_ips'][0],
                ip_address='192.168.4.7')])
        network_4_port_3 = dict(
            base.LibvirtNeutronFixture.network_4_port_1,
            id='fb2de1a1-d096-41be-9dbe-43066da64804',
            mac_address='b5:bc:2e:e7:51:ff',
            fixed_ips=[dict(
                base.LibvirtNeutronFixture.network_4_port_1['fixed_ips'][0],
                ip_address='192.168.4.8')])


def _parse_nic_info(real):
    """The fake's _parse_nic_info, that keeps the VF of an SR-IOV port.

    As a guest's definition does: pci_DOMAIN_BUS_SLOT_FUNCTION.
    """
    def parse(element):
        nic = real(element)
        address = element.find('./source/address')
        if nic['type'] == 'hostdev' and address is not None:
            nic['source'] = '_'.join(
                ['pci'] + [address.get(attr).replace('0x', '') for attr in
                           ('domain', 'bus', 'slot', 'function')])
        return nic
    return parse


def _xml_desc(real):
    """Domain.XMLDesc that shows each SR-IOV port at its own VF.

    (The fake of nova 21 to 23 shows every one at 0000:81:00.1; nova finds
    the port it detaches by its VF.) And the CPU and NUMA tuning of the
    guest, which the fake of nova 21 leaves out: nova updates them for the
    destination of a NUMA live migration.
    """
    def xml_desc(domain, flags):
        doc = etree.fromstring(real(domain, flags))
        vfs = [nic['source'] for nic in domain._def['devices']['nics']
               if nic['type'] == 'hostdev' and nic.get('source')]
        for vf, address in zip(vfs, doc.findall(
                "./devices/interface[@type='hostdev']/source/address")):
            address.attrib.update(zip(
                ('domain', 'bus', 'slot', 'function'),
                ['0x' + part for part in vf.split('_')[1:]]))
        # the XML the strict connection's domain was defined with
        defined = etree.fromstring(getattr(domain, 'defined_xml', '<d/>'))
        for tag in ('cputune', 'numatune'):
            if doc.find(tag) is None and defined.find(tag) is not None:
                doc.append(defined.find(tag))
        return etree.tostring(doc, encoding='unicode')
    return xml_desc


def _detach_device_flags(domain, xml, flags):
    """Domain.detachDeviceFlags of the fake libvirt of nova 24 on.

    A detached interface leaves the domain's definition, as it leaves the
    guest in libvirt: the source of a live migration detaches its SR-IOV
    ports, so that the guest it sends has none, and the destination
    attaches them after the migration.
    """
    if xml.startswith('<interface'):
        mac = etree.fromstring(xml).find('./mac').get('address')
        domain._def['devices']['nics'] = [
            nic for nic in domain._def['devices']['nics']
            if nic.get('mac') != mac]
    domain.detachDevice(xml)


class LiveMigrationTestBase(
        ServersTestBase, test_pci_sriov_servers._PCIServersTestBase):
    """The test base of the live migrations of PCI devices (nova 20 on)."""

    # nova 21's test base asks for the v2 API, without microversions
    api_major_version = 'v2.1'
    HAS_FLAVOR_PCI_LIVE_MIGRATION = False
    CHECK_AFTER_CLAIMS = ('nova.compute.manager.ComputeManager.'
                          '_update_migrate_vifs_profile_with_pci')
    # Where the live migration that test_rollback_after_periodic rolls back
    # fails on its destination: not in pre_live_migration, after which the
    # source of nova 20 to 23 attaches the SR-IOV ports it has not detached
    # yet a second time, and its rollback fails there, before it gets to
    # the destination (libvirt refuses the device; xena's source no longer
    # does it), but in the migration itself: the destination's QEMU does
    # not start the incoming guest.
    ROLLBACK_FAILS_IN = ('nova.tests.functional.libvirt.pci_adapter.'
                         'LiveMigrationTestBase.start_incoming_guest')
    # and the status it ends in: 'error' before victoria
    ROLLBACK_STATUS = inspect.signature(
        manager.ComputeManager._rollback_live_migration).parameters[
        'migration_status'].default

    def setUp(self):
        # RPC casts stay casts: a failure on a compute does not come back to
        # the API request (what the CAST_AS_CALL switch of later nova does)
        self.useFixture(fixtures.MonkeyPatch(
            self.CAST_AS_CALL_FIXTURE, lambda testcase: fixtures.Fixture()))
        self.PCI_PASSTHROUGH_WHITELIST = self.PCI_DEVICE_SPEC
        # the instances path of the hosts, where nova 21's test base leaves
        # the default one (the destination's check writes a file there)
        self.flags(instances_path=self.useFixture(fixtures.TempDir()).path)
        super(LiveMigrationTestBase, self).setUp()
        if 'device_detach_timeout' in CONF.libvirt:
            # the fake sends no event when a device is detached: nova 23
            # waits for it this long (20 s by default) before it goes on
            self.flags(device_detach_timeout=1, group='libvirt')
        self.neutron = self.useFixture(_LibvirtNeutronFixture(self))
        # the volume connector of pre_live_migration (later nova's
        # OSBrickFixture)
        self.useFixture(fixtures.MonkeyPatch(
            'nova.virt.libvirt.driver.connector', fake_os_brick_connector))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.unit.virt.libvirt.fakelibvirt.Domain.migrateToURI3',
            self._migrate_stub))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.unit.virt.libvirt.fakelibvirt.Domain.'
            'detachDeviceFlags', _detach_device_flags))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.unit.virt.libvirt.fakelibvirt._parse_nic_info',
            _parse_nic_info(fakelibvirt._parse_nic_info)))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.unit.virt.libvirt.fakelibvirt.Domain.XMLDesc',
            _xml_desc(fakelibvirt.Domain.XMLDesc)))

    def _migrate_stub(self, domain, destination, params, flags):
        """Live migrate, and undefine the source guest as libvirt does."""
        try:
            self.start_incoming_guest(
                host=urlparse.urlparse(destination).netloc,
                xml=params['destination_xml'])
        except Exception:
            domain.fail_job()
            raise
        domain.complete_job()
        if flags & fakelibvirt.VIR_MIGRATE_UNDEFINE_SOURCE:
            domain._connection._mark_not_running(domain)
            domain._connection._undefine(domain)

    def start_incoming_guest(self, host, xml):
        """The guest a live migration starts on its destination, host."""
        self.computes[host].driver._host.get_connection().createXML(
            xml, 'fake-createXML-doesnt-care-about-flags')

    def start_lm_compute(self, hostname, bus):
        """A host with a PF and two VFs on bus, NUMA node 0 pinning."""
        pci_info = fakelibvirt.HostPCIDevicesInfo(num_pfs=0, num_vfs=0)
        add_device = getattr(pci_info, 'add_device', None)
        if add_device is None:
            def add_device(bus, parent=None, **kwargs):
                _add_device(pci_info, bus, **kwargs)
        add_device(dev_type='PF', bus=bus, slot=0, function=0,
                   iommu_group=40, numa_node=0, vf_ratio=2)
        for function in (1, 2):
            add_device(dev_type='VF', bus=bus, slot=0, function=function,
                       iommu_group=40 + function, numa_node=0, vf_ratio=2,
                       parent=(bus, 0, 0))
        # two NUMA nodes of two cores of two threads, 16 GiB
        topology = dict(cpu_nodes=2, cpu_sockets=1, cpu_cores=2,
                        cpu_threads=2)
        host_info = fakelibvirt.HostInfo(kB_mem=16 * 1024, **topology)
        host_info.numa_topology = fakelibvirt.NUMATopology(
            kb_mem=16 * 1024 * 1024, **topology)
        conn = self._get_connection(
            host_info=host_info, pci_info=pci_info, hostname=hostname)
        with fixtures.MockPatch(
                'nova.virt.libvirt.host.Host.get_connection',
                return_value=conn):
            compute = self.start_service('compute', host=hostname)
        compute.driver._host.get_connection = lambda: conn
        self.computes[hostname] = compute
        return hostname

    if not hasattr(integrated_helpers.InstanceHelperMixin, '_reboot_server'):
        def _reboot_server(self, server, hard=False):
            self.api.post_server_action(
                server['id'],
                {'reboot': {'type': 'HARD' if hard else 'SOFT'}})
            return self._wait_for_state_change(server, 'ACTIVE')
