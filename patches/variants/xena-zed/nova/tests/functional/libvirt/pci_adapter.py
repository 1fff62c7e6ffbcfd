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

"""The functional test API of nova 24 to 26 (xena to zed), for the PCI tests.

See the shared module of the same name (nova 28 on). Here, unlike there:
_IntegratedTestBase has no CAST_AS_CALL switch (2023.2 added it) and always
makes RPC casts calls, with CastAsCallFixture; nova 24 and 25 call the
[pci] device_spec of nova 26 passthrough_whitelist and cannot unshelve to a
given host (API 2.91 came in zed); none of them tracks PCI devices in
placement; before 24.2.0 the libvirt test base restarts a compute service
object, not a host by name. For the live migrations (LiveMigrationTestBase):
flavor-based PCI devices do not live migrate (nova 31 on), and the last step
of the destination's check after its claims is the update of the ports'
profiles (the driver's check_source_migrate_data_at_dest() came in 29).
"""

import fixtures

from nova import conf
from nova.tests.fixtures import libvirt as fakelibvirt
from nova.tests.functional.libvirt import base
from nova.tests.functional.libvirt import test_pci_sriov_servers

__all__ = ['fakelibvirt', 'ServersTestBase', 'LiveMigrationTestBase']

CONF = conf.CONF


class ServersTestBase(base.ServersTestBase):

    CAST_AS_CALL_FIXTURE = 'nova.tests.fixtures.CastAsCallFixture'
    PCI_DEVICE_SPEC_OPTION = (
        'device_spec' if 'device_spec' in CONF.pci
        else 'passthrough_whitelist')
    HAS_PCI_IN_PLACEMENT = False
    HAS_UNSHELVE_TO_HOST = False

    if 'restart_compute_service' not in vars(base.ServersTestBase):
        def restart_compute_service(self, hostname):
            compute = super(ServersTestBase, self).restart_compute_service(
                self.computes[hostname])
            self.computes[hostname] = compute
            return compute


class LiveMigrationTestBase(
        test_pci_sriov_servers._PCIServersWithMigrationTestBase):
    """The test base of the live migrations of PCI devices."""

    HAS_FLAVOR_PCI_LIVE_MIGRATION = False
    CHECK_AFTER_CLAIMS = ('nova.compute.manager.ComputeManager.'
                          '_update_migrate_vifs_profile_with_pci')

    def setUp(self):
        # RPC casts stay casts: a failure on a compute does not come back to
        # the API request (what the CAST_AS_CALL switch of later nova does)
        self.useFixture(fixtures.MonkeyPatch(
            ServersTestBase.CAST_AS_CALL_FIXTURE,
            lambda testcase: fixtures.Fixture()))
        if ServersTestBase.PCI_DEVICE_SPEC_OPTION != 'device_spec':
            self.PCI_PASSTHROUGH_WHITELIST = self.PCI_DEVICE_SPEC
        super(LiveMigrationTestBase, self).setUp()
        # the neutron of the libvirt tests, which has SR-IOV ports
        self.neutron = self.useFixture(base.LibvirtNeutronFixture(self))

    def _migrate_stub(self, domain, destination, params, flags):
        """Live migrate, and undefine the source guest as libvirt does."""
        super(LiveMigrationTestBase, self)._migrate_stub(
            domain, destination, params, flags)
        if flags & fakelibvirt.VIR_MIGRATE_UNDEFINE_SOURCE:
            domain._connection._mark_not_running(domain)
            domain._connection._undefine(domain)

    def start_lm_compute(self, hostname, bus):
        """A host with a PF and two VFs on bus, NUMA node 0 pinning."""
        pci_info = fakelibvirt.HostPCIDevicesInfo(num_pfs=0, num_vfs=0)
        pci_info.add_device(
            dev_type='PF', bus=bus, slot=0, function=0, iommu_group=40,
            numa_node=0, vf_ratio=2)
        for function in (1, 2):
            pci_info.add_device(
                dev_type='VF', bus=bus, slot=0, function=function,
                iommu_group=40 + function, numa_node=0, vf_ratio=2,
                parent=(bus, 0, 0))
        return self.start_compute(hostname=hostname, pci_info=pci_info)
