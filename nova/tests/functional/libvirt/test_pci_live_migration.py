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

"""Live migrations of servers with PCI devices whose destination fails.

The destination of a live migration claims the PCI devices of the server in
check_can_live_migrate_destination(): those of its SR-IOV ports (nova 20 on)
and of its flavor (live-migratable devices, nova 31 on). These tests make a
destination fail after that claim, at each step where a live migration can
fail (the destination's check, the conductor's port binding, the
destination's pre_live_migration), and check at once, with no periodic task
in between, that nothing of the failed destination stays with the server:
the status of every device of every host, the claims and allocations of
each host's PCI tracker, the server's pci_devices as nova loads them, the
guest that a hard reboot defines, and a second server sent to the failed
destination. Each host has one PF with two VFs on a bus of its own
(compute1 0000:81, compute2 0000:82, compute3 0000:83), so that an address
names its host.
"""

import time

import fixtures
from oslo_serialization import jsonutils
from oslo_utils import importutils

from nova import context as nova_context
from nova import exception
from nova import objects
from nova.objects import fields
from nova import test
from nova.tests.functional.libvirt import pci_adapter
from nova.tests.functional.libvirt import pci_invariants

fakelibvirt = pci_adapter.fakelibvirt
HOSTS = ('compute1', 'compute2', 'compute3')
# what nova calls on a destination, and the conductor, where a live
# migration can fail after the destination's claim
CHECK = pci_adapter.LiveMigrationTestBase.CHECK_AFTER_CLAIMS
# (the adapter of nova 20 says where its network API is)
BIND = getattr(pci_adapter.LiveMigrationTestBase, 'BIND_PORTS',
               'nova.network.neutron.API.bind_ports_to_host')
PRE = 'nova.virt.libvirt.driver.LibvirtDriver.pre_live_migration'
# where test_rollback_after_periodic makes the live migration fail on its
# destination: pre_live_migration, unless the adapter says another place
# (nova 20 to 23)
ROLLBACK_FAILS_IN = getattr(
    pci_adapter.LiveMigrationTestBase, 'ROLLBACK_FAILS_IN', PRE)
# and the status of the migration it rolls back ('error' before nova 22)
ROLLBACK_STATUS = getattr(
    pci_adapter.LiveMigrationTestBase, 'ROLLBACK_STATUS', 'failed')


class PCILiveMigrationTest(pci_invariants.PCIInvariantsMixin,
                           pci_adapter.LiveMigrationTestBase):

    ADMIN_API = True
    microversion = 'latest'
    PCI_DEVICE_SPEC = [jsonutils.dumps({
        'vendor_id': fakelibvirt.PCI_VEND_ID,
        'product_id': fakelibvirt.VF_PROD_ID,
        'physical_network': 'physnet4',
        'live_migratable': 'yes',
    })]
    PCI_ALIAS = [jsonutils.dumps({
        'vendor_id': fakelibvirt.PCI_VEND_ID,
        'product_id': fakelibvirt.VF_PROD_ID,
        'device_type': fields.PciDeviceType.SRIOV_VF,
        'live_migratable': 'yes',
        'name': 'vf',
    })]

    def setUp(self):
        super(PCILiveMigrationTest, self).setUp()
        self.ctxt = nova_context.get_admin_context()
        # NUMA node 0, where the VFs are, pins; node 1 shares
        self.flags(cpu_dedicated_set='0-3', cpu_shared_set='4-7',
                   group='compute')
        for n, host in enumerate(HOSTS):
            self.start_lm_compute(host, bus=0x81 + n)
        self.ports = iter([self.neutron.network_4_port_1,
                           self.neutron.network_4_port_2,
                           self.neutron.network_4_port_3])

    # helpers

    def _resource_tracker(self, hostname):
        return self.computes[hostname].manager.rt

    @staticmethod
    def _vfs(host):
        bus = 0x80 + int(host[len('compute'):])
        return ['0000:%02x:00.1' % bus, '0000:%02x:00.2' % bus]

    def _create_port_server(self, host='compute1', pinned=False, flavor=None):
        """A server with an SR-IOV port (a VF), on host."""
        port = self.neutron.create_port({'port': next(self.ports)})['port']
        extra_spec = {'hw:cpu_policy': 'dedicated'} if pinned else {}
        extra_spec.update(flavor or {})
        flavor_id = self._create_flavor(vcpu=1, extra_spec=extra_spec)
        return self._create_server(
            flavor_id=flavor_id, networks=[{'port': port['id']}], host=host)

    def _fail(self, target, error, hosts=None, before=None):
        """target fails with error, once on each of hosts (None: the first
        host it runs for); returns [the hosts it failed on].
        """
        cls, _, name = target.rpartition('.')
        real = getattr(importutils.import_class(cls), name)
        # the host of a driver or a compute manager
        host_of = {c.driver: h for h, c in self.computes.items()}
        host_of.update({c.manager: h for h, c in self.computes.items()})
        failed = []

        def fail(obj, *args, **kwargs):
            host = kwargs.get('host') or host_of.get(obj)
            if host in failed or (
                    hosts is None and failed) or (
                    hosts is not None and host not in hosts):
                return real(obj, *args, **kwargs)
            failed.append(host)
            if before:
                before(host)
            raise error

        self.useFixture(fixtures.MonkeyPatch(target, fail))
        return failed

    def _held(self, uuid):
        """{host: [addresses]} of the devices claimed or allocated to uuid.

        As the DB and as each host's PCI tracker (its claims and
        allocations) say: both must agree.
        """
        held, tracked = {}, {}
        for host in self.computes:
            node = objects.ComputeNode.get_by_nodename(self.ctxt, host)
            addrs = sorted(
                dev.address for dev in
                objects.PciDeviceList.get_by_compute_node(self.ctxt, node.id)
                if dev.instance_uuid == uuid and dev.status in (
                    fields.PciDeviceStatus.CLAIMED,
                    fields.PciDeviceStatus.ALLOCATED))
            pci_tracker = self._resource_tracker(host).pci_tracker
            mine = sorted(
                dev.address for devs in (pci_tracker.claims.get(uuid, []),
                                         pci_tracker.allocations.get(uuid, []))
                for dev in devs)
            if addrs:
                held[host] = addrs
            if mine:
                tracked[host] = mine
        self.assertEqual(held, tracked,
                         'the PCI trackers and the DB do not agree')
        return held

    def assert_server_holds(self, server, host, count, failed):
        """The server runs on host and holds count devices there, and only.

        Checked without a periodic task: the devices held in the DB and by
        the trackers, instance.pci_devices lazily loaded and joined, the
        guest a hard reboot defines; a server sent to each failed
        destination boots there with a device of it. Then, after a
        periodic task, the PCI invariants of every host.
        """
        uuid = server['id']
        self.assertEqual(host, server['OS-EXT-SRV-ATTR:host'])
        held = self._held(uuid)
        self.assertEqual([host], list(held),
                         'the hosts whose devices the server holds (failed '
                         'destinations: %s): %s' % (failed, held))
        addrs = held[host]
        self.assertEqual(count, len(addrs))
        lazy = objects.Instance.get_by_uuid(self.ctxt, uuid)
        joined = objects.Instance.get_by_uuid(
            self.ctxt, uuid, expected_attrs=['pci_devices'])
        for inst in (lazy, joined):
            self.assertEqual(
                addrs, sorted(dev.address for dev in inst.pci_devices))
        self._reboot_server(server, hard=True)
        guests = self._guest_hostdevs(uuid)
        self.assertEqual(
            (addrs, {}), (guests.get(host), {
                dest: guests[dest] for dest in failed if dest in guests}),
            'the hostdevs of the hard rebooted guest, and of its guests on '
            'the failed destinations')
        for dest in failed:
            other = self._create_port_server(host=dest)
            self.assertEqual([dest], list(self._held(other['id'])))
        # nova reports the free devices in the compute nodes' PCI pools at
        # its periodic task only
        self._run_periodics()
        self.assert_pci_invariants()

    def _guest_hostdevs(self, uuid):
        guests = {}
        for host, compute in self.computes.items():
            conn = compute.driver._host.get_connection()
            hostdevs = conn.get_guest_pci_hostdevs().get(uuid)
            if hostdevs is not None:
                guests[host] = hostdevs
        return guests

    def _live_migrate_to(self, server, host, state='completed'):
        """Live migrate server to host (None: the scheduler's choice).

        (nova's _live_migrate helper takes a host from nova 33 on, and
        waits 5 s for the migration: too little on a loaded host.)
        """
        self.api.post_server_action(server['id'], {
            'os-migrateLive': {'host': host, 'block_migration': 'auto'}})
        deadline = time.time() + 120
        while True:
            # the server's newest migration, and the server
            migrations = self.api.api_get('/os-migrations').body[
                'migrations']
            status = max([(m['id'], m['status']) for m in migrations
                          if m['instance_uuid'] == server['id']] or
                         [(0, None)])[1]
            server = self.api.get_server(server['id'])
            if status == state and server['status'] == 'ACTIVE' and (
                    server['OS-EXT-STS:task_state'] is None):
                return server
            if time.time() > deadline:
                self.fail('The live migration of %s did not end %s: %s, '
                          'server %s' % (server['id'], state, status,
                                         server['status']))
            time.sleep(0.1)

    def _live_migrate_failing(self, target, error, hosts=None, before=None,
                              host=None, state='completed'):
        """Live migrate, target failing on hosts; (server, failed)."""
        failed = self._fail(target, error, hosts, before)
        server = self._live_migrate_to(self.server, host, state)
        self.assertEqual(len(hosts or [None]), len(failed),
                         'the injected failures did not all fire')
        return server, failed

    # the destination's check fails after its claim

    def test_check_fails(self):
        self.server = self._create_port_server()
        server, failed = self._live_migrate_failing(
            CHECK, exception.MigrationPreCheckError(reason='injected'))
        dest = server['OS-EXT-SRV-ATTR:host']
        self.assertNotIn(dest, ['compute1'] + failed)
        self.assert_server_holds(server, dest, 1, failed)

    def test_port_binding_fails(self):
        self.server = self._create_port_server()
        server, failed = self._live_migrate_failing(
            BIND, exception.PortBindingFailed(port_id='injected'))
        dest = server['OS-EXT-SRV-ATTR:host']
        self.assertNotIn(dest, ['compute1'] + failed)
        self.assert_server_holds(server, dest, 1, failed)

    def test_numa_every_destination_fails(self):
        """A NUMA live migration whose every destination fails its check.

        The migration ends in error, with the last failed host as its
        destination: the claims of neither may stay, across periodic tasks
        and a restart of the hosts, and after a live migration that works.
        """
        self.server = self._create_port_server(pinned=True)
        server, failed = self._live_migrate_failing(
            CHECK, exception.MigrationPreCheckError(reason='injected'),
            hosts=['compute2', 'compute3'], state='error')
        self.assertEqual('compute1', server['OS-EXT-SRV-ATTR:host'])
        held = self._held(server['id'])
        self.assertEqual(['compute1'], list(held),
                         'the hosts whose devices the server holds')
        self._run_periodics()
        for host in failed:
            self.restart_compute_service(host)
        self.assertEqual(held, self._held(server['id']),
                         'the devices the server holds')
        server = self._live_migrate_to(server, 'compute2')
        self.assert_server_holds(server, 'compute2', 1, ['compute3'])

    # the rollback of a live migration that failed on its destination

    def test_rollback_after_periodic(self):
        """The live migration fails on compute2 after its periodic task.

        In pre_live_migration, or where the adapter says
        (ROLLBACK_FAILS_IN).

        The instance path is shared: the destination's disks are kept. The
        periodic task allocated the claimed VF to the server.
        """
        self.useFixture(fixtures.MockPatch(
            'nova.virt.libvirt.driver.LibvirtDriver.'
            '_check_shared_storage_test_file', return_value=True))
        self.server = self._create_port_server()

        def periodic(host):
            self.computes[host].manager.update_available_resource(
                self.ctxt)

        held = self._held(self.server['id'])
        server, failed = self._live_migrate_failing(
            ROLLBACK_FAILS_IN, test.TestingException('injected'),
            hosts=['compute2'],
            before=periodic, host='compute2', state=ROLLBACK_STATUS)
        self.assertEqual(held, self._held(server['id']),
                         'the devices the server holds')
        self.assert_server_holds(server, 'compute1', 1, failed)

    # a server with a VF of its flavor and one of a port

    if pci_adapter.LiveMigrationTestBase.HAS_FLAVOR_PCI_LIVE_MIGRATION:
        def test_flavor_and_port(self):
            """Both VFs move; none stays claimed on either host."""
            self.server = self._create_port_server(
                flavor={'pci_passthrough:alias': 'vf:1'})
            self.assertEqual({'compute1': self._vfs('compute1')},
                             self._held(self.server['id']))
            server = self._live_migrate_to(self.server, 'compute2')
            self.assert_server_holds(server, 'compute2', 2, [])
            self._delete_server(server)
            self.assertEqual({}, self._held(server['id']))
