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

"""A test base for servers with PCI devices that nova reschedules.

Shared by the regression tests of bug 1860555 (a build rescheduled by the
late anti-affinity check of nova-compute) and the tests of move operations
whose first destination fails. It starts fake libvirt computes with type-PCI
devices behind a strict fake connection (``pci_invariants``), one PCI alias
for them, and a scheduler that, like racing schedulers, does not enforce
the anti-affinity policy, so that nova-compute's late check has to.
"""

import fixtures
from oslo_serialization import jsonutils
from oslo_utils import units

from nova import conf
from nova.objects import fields
from nova.tests.fixtures import libvirt as fakelibvirt
from nova.tests.functional import integrated_helpers
from nova.tests.functional.libvirt import base
from nova.tests.functional.libvirt import pci_invariants

CONF = conf.CONF


class PCIRescheduleTestBase(
    pci_invariants.PCIInvariantsMixin,
    base.ServersTestBase,
    integrated_helpers.InstanceHelperMixin,
):
    """Fake PCI hosts, a PCI alias and a scheduler blind to anti-affinity.

    Only the free RAM orders the hosts for the scheduler, so a test decides
    which host is tried first, and which next, by the RAM it gives them.
    """

    ADMIN_API = True
    microversion = 'latest'

    ALIAS_NAME = 'a1'
    PCI_DEVICE_SPEC = [jsonutils.dumps(
        {
            'vendor_id': fakelibvirt.PCI_VEND_ID,
            'product_id': fakelibvirt.PCI_PROD_ID,
        }
    )]
    PCI_ALIAS = [jsonutils.dumps(
        {
            'vendor_id': fakelibvirt.PCI_VEND_ID,
            'product_id': fakelibvirt.PCI_PROD_ID,
            'name': ALIAS_NAME,
            'device_type': fields.PciDeviceType.STANDARD,
        }
    )]
    # The scheduler service does not enforce the group policy, like two
    # schedulers racing each other would not; nova-compute's late check has
    # to.
    ENABLED_FILTERS = [
        'ComputeFilter',
        'ComputeCapabilitiesFilter',
        'ImagePropertiesFilter',
        'PciPassthroughFilter',
    ]
    # Only the free RAM orders the hosts.
    WEIGHT_CLASSES = ['nova.scheduler.weights.ram.RAMWeigher']
    # The name of the server groups of _create_group().
    GROUP_NAME = 'pci-reschedule'

    def setUp(self):
        super().setUp()
        # The scheduler service was started above with its own view of
        # enabled_filters (see _setup_scheduler_service), without the
        # anti-affinity filter. The conductor, a separate service in a real
        # deployment, accepts anti-affinity groups only when
        # ServerGroupAntiAffinityFilter is configured, and caches that
        # answer per process: configure it for the conductor and drop the
        # answer a previous test of this process may have cached.
        self.flags(
            enabled_filters=self.ENABLED_FILTERS + [
                'ServerGroupAntiAffinityFilter'],
            group='filter_scheduler')
        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.utils._SUPPORTS_ANTI_AFFINITY', None))
        # nova 26 renamed [pci]passthrough_whitelist of nova 24 and 25 to
        # device_spec; none of them schedules PCI devices in placement.
        spec_opt = (
            'device_spec' if 'device_spec' in CONF.pci
            else 'passthrough_whitelist')
        self.flags(
            alias=self.PCI_ALIAS, group='pci',
            **{spec_opt: self.PCI_DEVICE_SPEC})

    @staticmethod
    def _pci_in_placement():
        return False

    def _wait_for_server_parameter(
        self, server, expected_params, max_retries=10, **kwargs
    ):
        # A move tried on two or three hosts takes longer than nova's
        # default wait (10 polls) on a busy machine: wait six times longer.
        return super()._wait_for_server_parameter(
            server, expected_params, max_retries=max_retries * 6, **kwargs)

    def _setup_scheduler_service(self):
        self.flags(
            enabled_filters=self.ENABLED_FILTERS,
            weight_classes=self.WEIGHT_CLASSES,
            group='filter_scheduler')
        return self.start_service('scheduler')

    # hosts

    def _start_hosts(self, *layout, ram_mb=None):
        """Start one compute per item of layout, named compute1, compute2...

        Each item lists the (bus, slot) of the type-PCI devices of the host,
        which are at 0000:bus:slot.0 (see _devices). Unless ram_mb lists the
        RAM of each host, in MiB, compute1 has the most RAM, compute2 the
        second most, and so on, so the RAM weigher puts every server on
        compute1 (as long as it has free devices) and orders the alternate
        hosts by name.

        :returns: the names of the hosts
        """
        ram_mb = ram_mb or [
            (16 + 4 * (len(layout) - i)) * units.Ki
            for i in range(1, len(layout) + 1)]
        hostnames = []
        for i, devices in enumerate(layout, start=1):
            pci_info = fakelibvirt.HostPCIDevicesInfo(
                num_pci=0, num_pfs=0, num_vfs=0)
            for bus, slot in devices:
                pci_info.add_device(
                    dev_type='PCI', bus=bus, slot=slot, function=0,
                    iommu_group=40 + slot, numa_node=0)
            host_info = fakelibvirt.HostInfo(
                cpu_nodes=1, cpu_sockets=1, cpu_cores=4, cpu_threads=1,
                kB_mem=ram_mb[i - 1] * units.Ki)
            hostnames.append(self.start_compute(
                hostname='compute%d' % i, host_info=host_info,
                pci_info=pci_info))
        return hostnames

    @staticmethod
    def _devices(count, bus=0x81, first_slot=0):
        """The (bus, slot) of count devices on a bus, from first_slot on."""
        return [(bus, slot) for slot in range(first_slot, first_slot + count)]

    # flavors and server groups

    def _create_pci_flavor(self, num_devices=1, memory_mb=512):
        """A flavor asking for num_devices devices of the PCI alias."""
        return self._create_flavor(
            memory_mb=memory_mb, vcpu=1, disk=1,
            extra_spec={
                'pci_passthrough:alias': '%s:%d' % (
                    self.ALIAS_NAME, num_devices)})

    def _create_plain_flavor(self):
        """A flavor without PCI devices.

        Servers without devices need one of their own: the default of
        _build_server(), the first flavor listed, is a PCI flavor whenever
        its random id sorts first.
        """
        return self._create_flavor(memory_mb=512, vcpu=1, disk=1)

    def _create_group(self, max_server_per_host=None):
        """An anti-affinity server group named GROUP_NAME."""
        body = {'name': self.GROUP_NAME, 'policy': 'anti-affinity'}
        if max_server_per_host:
            body['rules'] = {'max_server_per_host': max_server_per_host}
        return self.api.post_server_groups(body)

    # guests

    def _guest_hostdevs_on(self, host, uuid):
        """[addresses] of the PCI hostdevs of the guest of uuid on host.

        None if host runs no guest of uuid.
        """
        conn = self.computes[host].driver._host.get_connection()
        return conn.get_guest_pci_hostdevs().get(uuid)

    def _guest_hostdevs(self, uuid):
        """{host: [addresses]} of the hostdevs of the guests of uuid."""
        guests = {}
        for host in sorted(self.computes):
            hostdevs = self._guest_hostdevs_on(host, uuid)
            if hostdevs is not None:
                guests[host] = hostdevs
        return guests
