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
23.0.0).
"""

import inspect

import fixtures

from nova.compute import manager
from nova.tests.functional.libvirt import base
from nova.tests.unit import fake_notifier
from nova.tests.unit.virt.libvirt import fake_imagebackend
from nova.tests.unit.virt.libvirt import fakelibvirt

__all__ = ['fakelibvirt', 'ServersTestBase']


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
            dev = fakelibvirt.FakePCIDevice(
                dev_type='PCI', slot=slot, function=0,
                iommu_group=40 + slot, numa_node=0)
            dev.pci_device = (
                dev.pci_device.replace('pci_0000_81_', 'pci_0000_%02x_' % bus)
                .replace('0000:81:', '0000:%02x:' % bus)
                .replace('<bus>129</bus>', '<bus>%d</bus>' % bus)
                .replace("bus='0x81'", "bus='%#04x'" % bus))
            pci_info.devices['pci_0000_%02x_%02x_0' % (bus, slot)] = dev
        return pci_info
