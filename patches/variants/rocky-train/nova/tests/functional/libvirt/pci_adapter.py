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

"""The functional test API of nova 18 to 20 (rocky to train), for the PCI
test suite, on Python 2.7.

See the shared module of the same name (nova 28 on). Here, unlike there:
rocky has no libvirt functional test base, so the suite's base is
test_servers.ServersTestBase with the fake libvirt put in place as stein's
and train's libvirt base does; that fake
(nova.tests.unit.virt.libvirt.fakelibvirt) has no type-PCI devices at the
addresses asked for (rocky: none at all) and its kB_mem is the MiB of the
host; notifications go to nova.tests.unit.fake_notifier; RPC casts are
always calls (CastAsCall); PCI devices are whitelisted with
[pci]passthrough_whitelist and not tracked in placement; prep_resize does
not check the server group policy; the API cannot unshelve to a given host
(2.91); the fake image backend of nova 19 and 20.0.0 cannot say whether
disks are on shared block storage; rocky and stein pin guest vCPUs to the
host CPUs of vcpu_pin_set (train added cpu_dedicated_set).

The live migrations of PCI devices (LiveMigrationTestBase, train only:
nova 18 and 19 claim nothing on the destination) differ here as on nova 21
to 23 (see that adapter), and also: the network API is
nova.network.neutronv2.api, the fake neutron binds no port to a host for
real (the adapter keeps the bindings it makes, with the port's VIF type),
the fake libvirt reports no migration job (nova tells how a migration ended
by whether the guest still runs on the source), and nova's test helpers
create, reboot and restart servers and computes their own way.
"""

import collections
import copy
import inspect
import io
import time
from xml.etree import ElementTree as etree

import fixtures
from oslo_serialization import jsonutils
from six.moves.urllib import parse as urlparse

import nova.conf
from nova import context as nova_context
from nova.tests.functional import test_servers
from nova.tests.unit import fake_notifier
from nova.tests.unit import fake_requests
from nova.tests.unit.virt.libvirt import fake_imagebackend
from nova.tests.unit.virt.libvirt import fake_os_brick_connector
from nova.tests.unit.virt.libvirt import fakelibvirt
from nova import version

try:
    # rocky and stein; train mocks libvirt_utils instead.
    from nova.tests.unit.virt.libvirt import fake_libvirt_utils
except ImportError:
    fake_libvirt_utils = None

try:
    # stein and train; rocky has no libvirt functional test base
    from nova.tests.functional.libvirt import base as libvirt_base
    from nova.tests.functional.libvirt import test_pci_sriov_servers
    _PCIServersTestBase = test_pci_sriov_servers._PCIServersTestBase
except (ImportError, AttributeError):
    libvirt_base = None
    _PCIServersTestBase = object

__all__ = ['fakelibvirt', 'ServersTestBase', 'LiveMigrationTestBase']

CONF = nova.conf.CONF


class FakePCIDevice(object):
    """A type-PCI device at 0000:bus:slot.0, as a libvirt node device."""

    template = """<device>
  <name>%(name)s</name>
  <parent>pci_0000_00_01_0</parent>
  <capability type='pci'>
    <domain>0</domain>
    <bus>%(bus)d</bus>
    <slot>%(slot)d</slot>
    <function>0</function>
    <product id='0x%(product_id)s'>I210 Gigabit Network Connection</product>
    <vendor id='0x%(vendor_id)s'>Intel Corporation</vendor>
    <iommuGroup number='%(iommu_group)d'>
      <address domain='0x0000' bus='%(bus)#04x' slot='%(slot)#04x'
               function='0x0'/>
    </iommuGroup>
    <numa node='0'/>
  </capability>
</device>"""

    def __init__(self, bus, slot, vendor_id, product_id):
        self.name = 'pci_0000_%02x_%02x_0' % (bus, slot)
        self.xml = self.template % {
            'name': self.name, 'bus': bus, 'slot': slot,
            'iommu_group': 40 + slot, 'vendor_id': vendor_id,
            'product_id': product_id}

    def XMLDesc(self, flags):
        return self.xml


class HostPCIDevicesInfo(object):
    """The type-PCI devices of a fake host, at the addresses given."""

    def __init__(self):
        self.devices = collections.OrderedDict()

    def add_device(self, **kwargs):
        dev = FakePCIDevice(**kwargs)
        self.devices[dev.name] = dev

    def get_all_devices(self):
        return list(self.devices)

    def get_device_by_name(self, device_name):
        return self.devices.get(device_name)


class _Notifier(object):
    """self.notifier of later nova, over nova.tests.unit.fake_notifier."""

    @property
    def versioned_notifications(self):
        return fake_notifier.VERSIONED_NOTIFICATIONS

    @staticmethod
    def wait_for_versioned_notifications(event_type):
        return fake_notifier.wait_for_versioned_notifications(
            event_type, timeout=10.0)


def _fake_backend_answers():
    """Whether the fake image backend says if disks are on shared storage."""
    return 'is_shared_block_storage' in inspect.getsource(fake_imagebackend)


class ServersTestBase(test_servers.ServersTestBase):

    CAST_AS_CALL_FIXTURE = 'nova.tests.unit.cast_as_call.CastAsCall'
    PCI_DEVICE_SPEC_OPTION = 'passthrough_whitelist'
    HAS_PCI_IN_PLACEMENT = False
    HAS_LATE_CHECK_IN_PREP_RESIZE = False
    HAS_UNSHELVE_TO_HOST = False
    # rocky's compute cannot send the reschedule of a resize of a guest with
    # a NUMA topology to the conductor: "Circular reference detected" in
    # the serialization of its request (stein and train can)
    CAN_RESCHEDULE_PINNED_RESIZE = (
        int(version.version_string().split('.')[0]) > 18)

    def setUp(self):
        super(ServersTestBase, self).setUp()
        self.flags(compute_driver='libvirt.LibvirtDriver')
        # Replace libvirt with fakelibvirt, as the libvirt functional base of
        # stein and train does.
        if fake_libvirt_utils is not None:
            self.useFixture(fixtures.MonkeyPatch(
                'nova.virt.libvirt.driver.libvirt_utils', fake_libvirt_utils))
        else:
            self.useFixture(fake_imagebackend.ImageBackendFixture())
            if not _fake_backend_answers():
                # An evacuation asks the image backend whether its disks
                # are on shared block storage; the fake of nova 19 and
                # 20.0.0 cannot say. They are not, as later fakes say.
                self.useFixture(fixtures.MockPatch(
                    'nova.virt.libvirt.driver.LibvirtDriver.'
                    'instance_on_disk', return_value=False))
            self.useFixture(fixtures.MockPatch(
                'nova.virt.libvirt.driver.libvirt_utils.is_valid_hostname',
                return_value=True))
            self.useFixture(fixtures.MockPatch(
                'nova.virt.libvirt.driver.libvirt_utils.file_open',
                side_effect=lambda *a, **k: io.BytesIO(b'')))
        self.useFixture(fakelibvirt.FakeLibvirtFixture())
        # There is no image to download and convert, nor a disk to
        # snapshot when a server is shelved.
        self.useFixture(fixtures.MockPatch(
            'nova.virt.libvirt.LibvirtDriver._create_image',
            return_value=(False, False)))
        self.useFixture(fixtures.MockPatch(
            'nova.virt.libvirt.driver.LibvirtDriver.snapshot'))
        self.useFixture(fixtures.MockPatch(
            'nova.virt.libvirt.LibvirtDriver._get_local_gb_info',
            return_value={'total': 128, 'used': 44, 'free': 84}))
        self.useFixture(fixtures.MockPatch(
            'nova.privsep.utils.supports_direct_io', return_value=True))
        self.useFixture(fixtures.MockPatch(
            'nova.virt.libvirt.host.Host.get_online_cpus',
            return_value=set(range(16))))
        fake_notifier.stub_notifier(self)
        self.addCleanup(fake_notifier.reset)
        self.notifier = _Notifier()
        self.placement = self.placement_api

    def _setup_compute_service(self):
        # The tests start their computes, see start_compute().
        pass

    def _get_connection(self, host_info, pci_info, hostname):
        conn = fakelibvirt.Connection(
            'qemu:///system', version=fakelibvirt.FAKE_LIBVIRT_VERSION,
            hv_version=fakelibvirt.FAKE_QEMU_VERSION, host_info=host_info,
            pci_info=pci_info)
        # rocky's fake says compute1 whatever the host.
        conn.hostname = hostname
        conn.getHostname = lambda: hostname
        return conn

    def restart_compute_service(self, hostname):
        """Restart the compute of hostname, with its driver and guests.

        Rocky restarts the service in place; stein and train start a new
        one, with the driver of the old one.
        """
        compute = super(ServersTestBase, self).restart_compute_service(
            self.computes[hostname])
        if compute is not None:
            self.computes[hostname] = compute
        return self.computes[hostname]

    def _fake_host_info(self, ram_mb):
        host_info = fakelibvirt.HostInfo(
            cpu_nodes=1, cpu_sockets=1, cpu_cores=4, cpu_threads=1,
            kB_mem=ram_mb)
        if self.numa_hosts:
            # the fake's HostInfo has no NUMA topology by default
            host_info.numa_topology = fakelibvirt.NUMATopology(
                cpu_nodes=1, cpu_sockets=1, cpu_cores=4, cpu_threads=1,
                kb_mem=ram_mb * 1024)
        # rocky takes the CPU count as it is given (default 2), stein and
        # train count it from the topology.
        host_info.cpus = 4
        return host_info

    def _fake_pci_info(self, devices):
        pci_info = HostPCIDevicesInfo()
        for bus, slot in devices:
            pci_info.add_device(
                bus=bus, slot=slot, vendor_id=self.PCI_VENDOR_ID,
                product_id=self.PCI_PRODUCT_ID)
        return pci_info

    # whether the hosts started next have a NUMA topology
    numa_hosts = False

    def _dedicate_host_cpus(self, cpus):
        """Before train (cpu_dedicated_set): vcpu_pin_set.

        The hosts started next have a NUMA topology, to pin vCPUs on.
        """
        self.numa_hosts = True
        if hasattr(CONF.compute, 'cpu_dedicated_set'):
            return super(ServersTestBase, self)._dedicate_host_cpus(cpus)
        self.flags(vcpu_pin_set=cpus)

    def _resource_tracker(self, hostname):
        manager = self.computes[hostname].manager
        # train keeps it in ComputeManager.rt
        return getattr(manager, 'rt', None) or manager._get_resource_tracker()


# The live migrations of PCI devices: train only.

def _add_device(pci_info, bus, **kwargs):
    """A PF or VF at 0000:bus:slot.function (the fake puts all on 0x81)."""
    dev = fakelibvirt.FakePCIDevice(**kwargs)
    dev.pci_device = (
        dev.pci_device.replace('pci_0000_81_', 'pci_0000_%02x_' % bus)
        .replace('0000:81:', '0000:%02x:' % bus)
        .replace('<bus>129</bus>', '<bus>%d</bus>' % bus)
        .replace("bus='0x81'", "bus='%#04x'" % bus))
    pci_info.devices['pci_0000_%02x_%02x_%d' % (
        bus, kwargs['slot'], kwargs['function'])] = dev


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

    (The fake shows every one at 0000:81:00.1; nova finds the port it
    detaches by its VF.) And the CPU and NUMA tuning of the guest, which
    the fake leaves out: nova updates them for the destination of a NUMA
    live migration. Without the fake's TCP serial port, which the guest of
    nova 21's fake no longer has (nor a guest of nova without the serial
    console): a live migration gives it the listen address of the
    destination's serial console.
    """
    def xml_desc(domain, flags):
        doc = etree.fromstring(real(domain, flags))
        devices = doc.find('./devices')
        for serial in devices.findall("./serial[@type='tcp']"):
            devices.remove(serial)
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
        return etree.tostring(doc)
    return xml_desc


def _mock_backend(real):
    """The fake image backend's, whose images say if they are in the
    instance path, as nova 21's do (not): the source of a live migration
    asks where the instance path is shared.
    """
    def mock_backend(fixture, backend_self, image_type=None):
        image_init = real(fixture, backend_self, image_type)
        if not hasattr(image_init, 'is_file_in_instance_path'):
            image_init.is_file_in_instance_path = lambda: False
        return image_init
    return mock_backend


def _detach_device_flags(domain, xml, flags):
    """Domain.detachDeviceFlags that takes a detached interface out.

    As libvirt does (and the fake of nova 24 on): the source of a live
    migration detaches its SR-IOV ports, so that the guest it sends has
    none, and the destination attaches them after the migration.
    """
    if xml.startswith('<interface'):
        mac = etree.fromstring(xml).find('./mac').get('address')
        domain._def['devices']['nics'] = [
            nic for nic in domain._def['devices']['nics']
            if nic.get('mac') != mac]
    domain.detachDevice(xml)


class _LibvirtNeutronFixture(getattr(libvirt_base, 'LibvirtNeutronFixture',
                                     object)):
    """The neutron of the libvirt tests, with three SR-IOV ports.

    Train's has the first only, without the project and state of a port
    and with a VF in its binding profile: here it has the fields of the
    fixture's other ports, no VF until nova binds it, and the others are
    copies of it. Its port bindings for a host have no VIF type, which the
    destination of a live migration plugs, and are not kept: these have
    the port's, and the port takes the profile (the VF) of the binding
    activated on the destination, as with neutron.
    """

    def __init__(self, test):
        super(_LibvirtNeutronFixture, self).__init__(test)
        port = dict(self.port_2, **self.network_4_port_1)
        port.pop('binding:profile', None)
        self.network_4_port_1 = port
        self.network_4_port_2 = dict(
            port, id='4a0e3b05-4704-4adb-bfb1-f31f0e4d1bdc',
            mac_address='b5:bc:2e:e7:51:ef',
            fixed_ips=[dict(port['fixed_ips'][0], ip_address='192.168.4.7')])
        self.network_4_port_3 = dict(
            port, id='fb2de1a1-d096-41be-9dbe-43066da64804',
            mac_address='b5:bc:2e:e7:51:ff',
            fixed_ips=[dict(port['fixed_ips'][0], ip_address='192.168.4.8')])

    def setUp(self):
        super(_LibvirtNeutronFixture, self).setUp()
        # it sends no network-vif-plugged event: the source of a live
        # migration does not wait for one (as nova 21's fixture says)
        self.test.flags(vif_plugging_timeout=0)
        self._bindings = collections.defaultdict(dict)
        self.test.stub_out(
            'nova.network.neutronv2.api.API._create_port_binding',
            self._create_port_binding)
        self.test.stub_out(
            'nova.network.neutronv2.api.API.activate_port_binding',
            self._activate_port_binding)
        # (the fixture makes this one a no-op: it reads the bindings of
        # the destination through a client the fixture mocks)
        self.test.stub_out(
            'nova.network.neutronv2.api.API.migrate_instance_start',
            self._migrate_instance_start)

    # (stubs of API methods: fixtures gives them the API first, or not)

    def _create_port_binding(self, *args):
        context, client, port_id, data = args[-4:]
        binding = copy.deepcopy(data['binding'])
        port = self._ports.get(port_id, {})
        for key in ('vif_type', 'vif_details', 'vnic_type'):
            if 'binding:' + key in port:
                binding[key] = port['binding:' + key]
        self._bindings[port_id][binding['host']] = binding
        return fake_requests.FakeResponse(
            200, content=jsonutils.dumps({'binding': binding}))

    def _migrate_instance_start(self, *args):
        """Activate the bindings of the destination, as nova asks."""
        context, instance, migration = args[-3:]
        host = migration['dest_compute']
        for vif in instance.get_network_info():
            if host in self._bindings.get(vif['id'], {}):
                self._activate_port_binding(context, vif['id'], host)

    def _activate_port_binding(self, *args):
        context, port_id, host = args[-3:]
        binding = self._bindings[port_id][host]
        self._ports[port_id].update({
            'binding:host_id': host,
            'binding:profile': binding.get('profile', {})})


class LiveMigrationTestBase(_PCIServersTestBase):
    """The test base of the live migrations of PCI devices (nova 20)."""

    USE_NEUTRON = True
    api_major_version = 'v2.1'
    HAS_FLAVOR_PCI_LIVE_MIGRATION = False
    CHECK_AFTER_CLAIMS = ('nova.compute.manager.ComputeManager.'
                          '_update_migrate_vifs_profile_with_pci')
    BIND_PORTS = 'nova.network.neutronv2.api.API.bind_ports_to_host'
    # Where the live migration that test_rollback_after_periodic rolls back
    # fails on its destination: not in pre_live_migration, after which the
    # source attaches the SR-IOV ports it has not detached yet a second
    # time, and its rollback fails there, before it gets to the destination
    # (libvirt refuses the device; xena's source no longer does it), but in
    # the migration itself: the destination's QEMU does not start the
    # incoming guest. And the status it ends in.
    ROLLBACK_FAILS_IN = ('nova.tests.functional.libvirt.pci_adapter.'
                         'LiveMigrationTestBase.start_incoming_guest')
    # (the default status of nova 20's _rollback_live_migration())
    ROLLBACK_STATUS = 'error'

    def setUp(self):
        # RPC casts stay casts: a failure on a compute does not come back to
        # the API request (what the CAST_AS_CALL switch of later nova does)
        self.useFixture(fixtures.MonkeyPatch(
            ServersTestBase.CAST_AS_CALL_FIXTURE,
            lambda testcase: fixtures.Fixture()))
        self.PCI_PASSTHROUGH_WHITELIST = self.PCI_DEVICE_SPEC
        self.flags(instances_path=self.useFixture(fixtures.TempDir()).path)
        fixture = fake_imagebackend.ImageBackendFixture
        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.unit.virt.libvirt.fake_imagebackend.'
            'ImageBackendFixture._mock_backend',
            _mock_backend(fixture._mock_backend)))
        super(LiveMigrationTestBase, self).setUp()
        self.computes = {}
        self.placement = self.placement_api
        self.neutron = self.useFixture(_LibvirtNeutronFixture(self))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.virt.libvirt.driver.connector', fake_os_brick_connector))
        for name, new in (
                ('Domain.migrateToURI3', self._migrate_stub),
                ('Domain.detachDeviceFlags', _detach_device_flags),
                ('_parse_nic_info',
                 _parse_nic_info(fakelibvirt._parse_nic_info)),
                ('Domain.XMLDesc', _xml_desc(fakelibvirt.Domain.XMLDesc))):
            self.useFixture(fixtures.MonkeyPatch(
                'nova.tests.unit.virt.libvirt.fakelibvirt.' + name, new))

    def _migrate_stub(self, domain, destination, params, flags):
        """Live migrate, and undefine the source guest as libvirt does.

        The fake reports no job: nova sees the migration completed when
        the guest no longer runs on the source, failed when it still does.
        """
        self.start_incoming_guest(
            host=urlparse.urlparse(destination).netloc,
            xml=params['destination_xml'])
        domain._state = fakelibvirt.VIR_DOMAIN_SHUTOFF
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
        _add_device(pci_info, bus, dev_type='PF', slot=0, function=0,
                    iommu_group=40, numa_node=0, vf_ratio=2)
        for function in (1, 2):
            _add_device(pci_info, bus, dev_type='VF', slot=0,
                        function=function, iommu_group=40 + function,
                        numa_node=0, vf_ratio=2)
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

    def restart_compute_service(self, hostname):
        compute = super(LiveMigrationTestBase, self).restart_compute_service(
            self.computes[hostname])
        self.computes[hostname] = compute
        return compute

    # nova's test helpers of later releases

    def _wait_for_state_change(self, server, status):
        for _ in range(100):
            server = self.api.get_server(server['id'])
            if server['status'] == status:
                return server
            time.sleep(0.1)
        self.fail('Server %s is %s, not %s' % (
            server['id'], server['status'], status))

    def _create_server(self, flavor_id, networks, host):
        server = self.api.post_server({'server': {
            'name': 'pci-live-migration', 'flavorRef': flavor_id,
            'imageRef': '155d900f-4e14-4e4c-a73d-069cbf4541e6',
            'networks': networks, 'host': host}})
        return self._wait_for_state_change(server, 'ACTIVE')

    def _reboot_server(self, server, hard=False):
        self.api.post_server_action(
            server['id'], {'reboot': {'type': 'HARD' if hard else 'SOFT'}})
        return self._wait_for_state_change(server, 'ACTIVE')

    def _run_periodics(self):
        ctxt = nova_context.get_admin_context()
        for compute in self.computes.values():
            compute.manager.update_available_resource(ctxt)
