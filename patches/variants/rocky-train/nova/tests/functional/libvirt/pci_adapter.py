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
"""

import collections
import inspect
import io

import fixtures

import nova.conf
from nova.tests.functional import test_servers
from nova.tests.unit import fake_notifier
from nova.tests.unit.virt.libvirt import fake_imagebackend
from nova.tests.unit.virt.libvirt import fakelibvirt
from nova import version

try:
    # rocky and stein; train mocks libvirt_utils instead.
    from nova.tests.unit.virt.libvirt import fake_libvirt_utils
except ImportError:
    fake_libvirt_utils = None

__all__ = ['fakelibvirt', 'ServersTestBase']

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
