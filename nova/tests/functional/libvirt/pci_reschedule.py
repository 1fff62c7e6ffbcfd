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

The suite runs on every nova release the fork serves, from 18 (rocky, on
Python 2.7) on. It is written against the newest nova functional test API;
where an older one differs, it calls a hook of ``NovaTestAPIHooks``, which
the ``pci_adapter.ServersTestBase`` of that generation overrides.
"""

import time

import fixtures
from oslo_serialization import jsonutils
from oslo_utils import units

from nova import context as nova_context
from nova import objects
from nova.objects import fields
from nova.tests.functional import integrated_helpers
from nova.tests.functional.libvirt import pci_adapter
from nova.tests.functional.libvirt import pci_invariants

fakelibvirt = pci_adapter.fakelibvirt

# An image of nova's fake image service, in every release.
IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6'


class NovaTestAPIHooks(object):
    """Where nova's functional test API differs: as the newest one has it.

    PCIRescheduleTestBase puts this class after ``pci_adapter.
    ServersTestBase``, the test base of the nova release the suite runs on,
    so that the test base of an older generation overrides what differs
    there (patches/variants/GENERATION/.../pci_adapter.py), and nova's own
    test base what this class adds to the older ones.
    """

    # Whether nova's test base makes RPC casts calls (a test class says
    # False to keep them casts), and, where nova's test base has no such
    # switch, the fixture it makes them calls with.
    CAST_AS_CALL = True
    CAST_AS_CALL_FIXTURE = None
    # The [pci] option that says which host devices are for guests.
    PCI_DEVICE_SPEC_OPTION = 'device_spec'
    # Whether nova can track PCI devices in placement.
    HAS_PCI_IN_PLACEMENT = True
    # Whether prep_resize checks the server group policy on the destination.
    HAS_LATE_CHECK_IN_PREP_RESIZE = True
    # Whether the API can unshelve a server to a given host (2.91).
    HAS_UNSHELVE_TO_HOST = True
    # Whether nova can reschedule the resize of a guest with pinned CPUs.
    CAN_RESCHEDULE_PINNED_RESIZE = True

    def _fake_host_info(self, ram_mb):
        return fakelibvirt.HostInfo(
            cpu_nodes=1, cpu_sockets=1, cpu_cores=4, cpu_threads=1,
            kB_mem=ram_mb * units.Ki)

    def _fake_pci_info(self, devices):
        """Type-PCI devices at 0000:bus:slot.0, for each (bus, slot)."""
        pci_info = fakelibvirt.HostPCIDevicesInfo(
            num_pci=0, num_pfs=0, num_vfs=0)
        for bus, slot in devices:
            pci_info.add_device(
                dev_type='PCI', bus=bus, slot=slot, function=0,
                iommu_group=40 + slot, numa_node=0)
        return pci_info

    def start_compute(self, hostname, host_info, pci_info):
        """Start a libvirt compute on a fake host, as nova 22 on do."""
        conn = self._get_connection(
            host_info=host_info, pci_info=pci_info, hostname=hostname)
        with fixtures.MockPatch(
                'nova.virt.libvirt.host.Host.get_connection',
                return_value=conn):
            compute = self.start_service('compute', host=hostname)
        compute.driver._host.get_connection = lambda: conn
        self.computes[hostname] = compute
        return hostname

    def _resource_tracker(self, hostname):
        return self.computes[hostname].manager.rt

    def _dedicate_host_cpus(self, cpus):
        """The host CPUs of the computes started next pin guest vCPUs."""
        self.flags(cpu_dedicated_set=cpus, cpu_shared_set=None,
                   group='compute')

    def _unshelve(self, server, host):
        """Unshelve a shelved offloaded server to host.

        Where the API cannot, the operator disables the other hosts.
        """
        if self.HAS_UNSHELVE_TO_HOST:
            self.api.post_server_action(
                server['id'], {'unshelve': {'host': host}})
            return
        for other in sorted(set(self.computes) - {host}):
            self.api.put_service(
                self._service_id(other), {'status': 'disabled'})
        self.api.post_server_action(server['id'], {'unshelve': None})


class PCIRescheduleTestBase(
        pci_invariants.PCIInvariantsMixin,
        pci_adapter.ServersTestBase,
        NovaTestAPIHooks,
        integrated_helpers.InstanceHelperMixin):
    """Fake PCI hosts, a PCI alias and a scheduler blind to anti-affinity.

    Only the free RAM orders the hosts for the scheduler, so a test decides
    which host is tried first, and which next, by the RAM it gives them.
    """

    ADMIN_API = True
    api_major_version = 'v2.1'
    microversion = 'latest'

    ALIAS_NAME = 'a1'
    # fakelibvirt's type-PCI devices (PCI_VEND_ID and PCI_PROD_ID there).
    PCI_VENDOR_ID = '8086'
    PCI_PRODUCT_ID = '1533'
    PCI_DEVICE_SPEC = [jsonutils.dumps(
        {
            'vendor_id': PCI_VENDOR_ID,
            'product_id': PCI_PRODUCT_ID,
        }
    )]
    PCI_ALIAS = [jsonutils.dumps(
        {
            'vendor_id': PCI_VENDOR_ID,
            'product_id': PCI_PRODUCT_ID,
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
        if not self.CAST_AS_CALL and self.CAST_AS_CALL_FIXTURE:
            # Do what the CAST_AS_CALL switch of later nova does.
            self.useFixture(fixtures.MonkeyPatch(
                self.CAST_AS_CALL_FIXTURE,
                lambda testcase: fixtures.Fixture()))
        super(PCIRescheduleTestBase, self).setUp()
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
        self.flags(
            alias=self.PCI_ALIAS, group='pci',
            **{self.PCI_DEVICE_SPEC_OPTION: self.PCI_DEVICE_SPEC})
        if self.PCI_IN_PLACEMENT:
            self.flags(report_in_placement=True, group='pci')
            self.flags(pci_in_placement=True, group='filter_scheduler')

    def _setup_scheduler_service(self):
        self.flags(
            enabled_filters=self.ENABLED_FILTERS,
            weight_classes=self.WEIGHT_CLASSES,
            group='filter_scheduler')
        return self.start_service('scheduler')

    # hosts

    def _start_hosts(self, layout, ram_mb=None, first=1):
        """Start one compute per item of layout, named compute1, compute2...

        Each item lists the (bus, slot) of the type-PCI devices of the host,
        which are at 0000:bus:slot.0 (see _devices). Unless ram_mb lists the
        RAM of each host, in MiB, compute1 has the most RAM, compute2 the
        second most, and so on, so the RAM weigher puts every server on
        compute1 (as long as it has free devices) and orders the alternate
        hosts by name. first: the number of the first host.

        :returns: the names of the hosts
        """
        ram_mb = ram_mb or [
            (16 + 4 * (len(layout) - i)) * units.Ki
            for i in range(1, len(layout) + 1)]
        return [
            self.start_compute(
                hostname='compute%d' % (first + i),
                host_info=self._fake_host_info(ram_mb[i]),
                pci_info=self._fake_pci_info(devices))
            for i, devices in enumerate(layout)]

    @staticmethod
    def _devices(count, bus=0x81, first_slot=0):
        """The (bus, slot) of count devices on a bus, from first_slot on."""
        return [(bus, slot) for slot in range(first_slot, first_slot + count)]

    def _service_id(self, host):
        return self.api.get_services(
            host=host, binary='nova-compute')[0]['id']

    # flavors, servers and server groups

    def _create_pci_flavor(self, num_devices=1, memory_mb=512,
                           pinned=False):
        """A flavor asking for num_devices devices of the PCI alias.

        pinned: its vCPU is pinned to a host CPU (see _dedicate_host_cpus).
        """
        extra_spec = {
            'pci_passthrough:alias': '%s:%d' % (self.ALIAS_NAME, num_devices)}
        if pinned:
            extra_spec['hw:cpu_policy'] = 'dedicated'
        return self._create_flavor(
            memory_mb=memory_mb, vcpu=1, disk=1, ephemeral=0,
            extra_spec=extra_spec)

    def _create_plain_flavor(self):
        """A flavor without PCI devices."""
        return self._create_flavor(memory_mb=512, vcpu=1, disk=1, ephemeral=0)

    def _create_server(self, flavor_id, host=None, group=None, count=1):
        """Create count servers with one request, members of group if given.

        host forces them to a host (the availability zone "nova:HOST", as
        every release takes it). The API returns at once, with the first.
        """
        server = {
            'name': self.GROUP_NAME, 'imageRef': IMAGE,
            'flavorRef': flavor_id, 'networks': 'none',
            'min_count': count, 'max_count': count,
        }
        if host:
            server['availability_zone'] = 'nova:%s' % host
        body = {'server': server}
        if group:
            body['os:scheduler_hints'] = {'group': group['id']}
        return self.api.post_server(body)

    def _wait_for_state(self, server, status):
        """Wait for the server to be in status, with no task; return it."""
        return self._wait_for(
            server, {'status': status, 'OS-EXT-STS:task_state': None})

    def _wait_for(self, server, params, timeout=30):
        """Wait for the server's API view to show params; return it."""
        deadline = time.time() + timeout
        while True:
            server = self.api.get_server(server['id'])
            if all(server.get(key) == value for key, value in params.items()):
                return server
            if time.time() > deadline:
                self.fail('Server %s did not get to %s: %s' % (
                    server['id'], params,
                    {key: server.get(key)
                     for key in list(params) + ['status', 'fault']}))
            time.sleep(0.1)

    def _create_group(self, max_server_per_host=None):
        """An anti-affinity server group named GROUP_NAME."""
        body = {'name': self.GROUP_NAME, 'policy': 'anti-affinity'}
        if max_server_per_host:
            body['rules'] = {'max_server_per_host': max_server_per_host}
        return self.api.post_server_groups(body)

    def _pinned_cpus(self, host):
        """The host CPUs of host that pin guest vCPUs, as its node says."""
        node = objects.ComputeNode.get_by_host_and_nodename(
            nova_context.get_admin_context(), host, host)
        return sorted(
            cpu for cell in objects.NUMATopology.obj_from_db_obj(
                node.numa_topology).cells
            for cpu in cell.pinned_cpus)

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
