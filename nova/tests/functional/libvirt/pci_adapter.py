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

"""The functional test API of nova 28 (2023.2) on, for the PCI test suite.

The suite (``pci_invariants``, ``pci_reschedule`` and the tests on them) is
written once, against the newest nova functional test API. This module is
where it meets the nova it runs on: its fake libvirt and the libvirt test
base that ``pci_reschedule.PCIRescheduleTestBase`` builds on. Each older
generation of that API has its own copy of this module in the fork's
patches/variants/GENERATION/, whose test base overrides the hooks of
``pci_reschedule.NovaTestAPIHooks`` where its nova differs.

nova 27 (2023.1) and the first releases of 28 have no CAST_AS_CALL switch
in _IntegratedTestBase (a later 2023.2 release has it) and always make RPC
casts calls, with CastAsCallFixture: the suite turns that fixture off.
"""

import fixtures
from oslo_utils import versionutils

from nova.tests.fixtures import libvirt as fakelibvirt
from nova.tests.functional import integrated_helpers
from nova.tests.functional.libvirt import base
from nova.tests.functional.libvirt import test_pci_sriov_servers
from nova.virt.libvirt import driver

__all__ = ['fakelibvirt', 'ServersTestBase', 'LiveMigrationTestBase']


class ServersTestBase(base.ServersTestBase):

    if not hasattr(integrated_helpers._IntegratedTestBase, 'CAST_AS_CALL'):
        CAST_AS_CALL_FIXTURE = 'nova.tests.fixtures.CastAsCallFixture'


class LiveMigrationTestBase(
        test_pci_sriov_servers._PCIServersWithMigrationTestBase):
    """The test base of the live migrations of PCI devices (nova 20 on)."""

    # RPC casts stay casts: a failure on a compute does not come back to
    # the API request.
    CAST_AS_CALL = False
    # whether flavor-based PCI devices live migrate (nova 31 on)
    HAS_FLAVOR_PCI_LIVE_MIGRATION = hasattr(
        driver, 'MIN_VFIO_PCI_VARIANT_LIBVIRT_VERSION')
    # the last step of the destination's check of a live migration, after
    # its claims: the driver's check of the migrate data (nova 29 on),
    # before that the update of the ports' profiles with the claimed VFs
    CHECK_AFTER_CLAIMS = (
        'nova.virt.libvirt.driver.LibvirtDriver.'
        'check_source_migrate_data_at_dest'
        if hasattr(driver.LibvirtDriver, 'check_source_migrate_data_at_dest')
        else 'nova.compute.manager.ComputeManager.'
        '_update_migrate_vifs_profile_with_pci')

    def setUp(self):
        if not hasattr(integrated_helpers._IntegratedTestBase,
                       'CAST_AS_CALL'):
            # what the CAST_AS_CALL switch of later nova does
            self.useFixture(fixtures.MonkeyPatch(
                'nova.tests.fixtures.CastAsCallFixture',
                lambda testcase: fixtures.Fixture()))
        super().setUp()
        # the neutron of the libvirt tests, which has SR-IOV ports
        self.neutron = self.useFixture(base.LibvirtNeutronFixture(self))

    def _migrate_stub(self, domain, destination, params, flags):
        """Live migrate, and undefine the source guest as libvirt does.

        (nova asks for VIR_MIGRATE_UNDEFINE_SOURCE; the stub of nova's
        tests leaves the guest on the source.)
        """
        super()._migrate_stub(domain, destination, params, flags)
        if flags & fakelibvirt.VIR_MIGRATE_UNDEFINE_SOURCE:
            domain._connection._mark_not_running(domain)
            domain._connection._undefine(domain)

    def start_lm_compute(self, hostname, bus):
        """A host with a PF and two VFs on bus, NUMA node 0 pinning."""
        kwargs = {}
        if self.HAS_FLAVOR_PCI_LIVE_MIGRATION:
            kwargs = {
                'libvirt_version': versionutils.convert_version_to_int(
                    driver.MIN_VFIO_PCI_VARIANT_LIBVIRT_VERSION),
                'qemu_version': versionutils.convert_version_to_int(
                    driver.MIN_VFIO_PCI_VARIANT_QEMU_VERSION)}
        pci_info = fakelibvirt.HostPCIDevicesInfo(num_pfs=0, num_vfs=0)
        pci_info.add_device(
            dev_type='PF', bus=bus, slot=0, function=0, iommu_group=40,
            numa_node=0, vf_ratio=2)
        for function in (1, 2):
            pci_info.add_device(
                dev_type='VF', bus=bus, slot=0, function=function,
                iommu_group=40 + function, numa_node=0, vf_ratio=2,
                parent=(bus, 0, 0))
        return self.start_compute(
            hostname=hostname, pci_info=pci_info, **kwargs)
