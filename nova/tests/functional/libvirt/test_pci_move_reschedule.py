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

"""Move operations of a server with PCI devices whose destination fails.

Related to bug 1860555: a claim aborted on a copy of the instance leaves the
PCI devices of the failed host on the instance. These tests move a server
holding a PCI device (resize, cold migration, evacuation and unshelve of a
shelved offloaded server), make the first destination fail after it claimed
its devices so that nova, or the operator, picks another host, and then
check on every host that nothing of the failed destination stays with the
instance.

The hosts' devices have distinct addresses (compute1 has 0000:81:00.0,
compute2 0000:82:00.0, and so on) so a device is named by its host. Only the
free RAM orders the hosts for the scheduler, and the scheduler does not
enforce the anti-affinity policy, so that nova-compute's late check has to.
"""

import fixtures
import oslo_messaging as messaging
from oslo_utils import units

from nova.compute import rpcapi as compute_rpcapi
from nova.compute import vm_states
from nova import context as nova_context
from nova import objects
from nova.objects import fields
from nova.tests.functional.libvirt import pci_reschedule

fakelibvirt = pci_reschedule.fakelibvirt

# The instance action events of the destination compute of each move.
MOVE_EVENTS = (
    'compute_prep_resize',
    'compute_rebuild_instance',
    'compute_unshelve_instance',
)


def _migrate_disk_and_power_off(driver, context, instance, *args, **kwargs):
    driver.power_off(instance)
    driver._undefine_domain(instance)
    return '{}'


class PCIMoveRescheduleTest(pci_reschedule.PCIRescheduleTestBase):

    # RPC casts stay casts: a failure on the compute does not come back to
    # the API call.
    CAST_AS_CALL = False

    GROUP_NAME = 'pci-move'

    def setUp(self):
        super(PCIMoveRescheduleTest, self).setUp()
        self.flags(allow_resize_to_same_host=False)
        self.ctxt = nova_context.get_admin_context()
        # The fake libvirt has no disks to move: power the source guest off
        # and undefine it, as the real driver powers it off and confirming
        # the resize undefines it. A revert defines it again.
        self.useFixture(fixtures.MonkeyPatch(
            'nova.virt.libvirt.driver.LibvirtDriver.'
            'migrate_disk_and_power_off', _migrate_disk_and_power_off))
        # Destinations whose cast to the source compute fails: the last
        # step of prep_resize, after the claim.
        self.failing_destinations = set()
        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.rpcapi.ComputeAPI.resize_instance',
            self._fail_cast_from(compute_rpcapi.ComputeAPI.resize_instance)))

    def _fail_cast_from(self, real):
        def resize_instance(rpcapi, ctxt, instance, migration, *args, **kw):
            if migration.dest_compute in self.failing_destinations:
                self.failing_destinations.discard(migration.dest_compute)
                raise messaging.MessageDeliveryFailure(
                    'injected: the cast from %s to the source failed' %
                    migration.dest_compute)
            return real(rpcapi, ctxt, instance, migration, *args, **kw)
        return resize_instance

    # helpers

    def _start_pci_hosts(self, count, group=None, pinned=False):
        """Start compute1..count, one PCI device each, at 0000:8N:00.0.

        compute1 has the least RAM and compute2 the most, then compute3 and
        so on, 6 GiB apart, so the scheduler tries the destinations in name
        order. The server with a PCI device, a member of group if given, is
        created on compute1 before the other hosts start (nova 18 to 20
        never reschedule a server forced to a host, even when it moves);
        pinned: its vCPU is pinned.

        :returns: the server
        """
        self._start_hosts([self._devices(1, bus=0x81)], ram_mb=[6 * units.Ki])
        server = self._wait_for_state(self._create_server(
            self._create_pci_flavor(pinned=pinned), group=group), 'ACTIVE')
        self.assertEqual('compute1', server['OS-EXT-SRV-ATTR:host'])
        self.assert_pci_devices_of(
            server, {'compute1': [self._address('compute1')]})
        self._start_hosts(
            [self._devices(1, bus=0x80 + i) for i in range(2, count + 1)],
            ram_mb=[(32 - 6 * i) * units.Ki for i in range(2, count + 1)],
            first=2)
        return server

    @staticmethod
    def _address(host):
        return '0000:%02x:00.0' % (0x80 + int(host[len('compute'):]))

    def _create_other_member(self, group, host):
        """A member of group without PCI devices, forced to host."""
        return self._wait_for_state(self._create_server(
            self._create_plain_flavor(), host=host, group=group), 'ACTIVE')

    def _host_of_node(self):
        return {
            objects.ComputeNode.get_by_host_and_nodename(
                self.ctxt, host, host).id: host
            for host in self.computes}

    def _pci_devices_by_host(self, devices, hosts):
        by_host = {}
        for dev in devices or []:
            by_host.setdefault(
                hosts.get(dev.compute_node_id, '?'), []).append(dev.address)
        return {host: sorted(addrs) for host, addrs in by_host.items()}

    def _claimed_by(self, uuid):
        """{host: [addresses]} of the devices claimed or allocated to uuid."""
        claimed = {}
        for host in sorted(self.computes):
            cn = objects.ComputeNode.get_by_host_and_nodename(
                self.ctxt, host, host)
            addrs = sorted(
                dev.address for dev in
                objects.PciDeviceList.get_by_compute_node(self.ctxt, cn.id)
                if dev.instance_uuid == uuid and dev.status in (
                    fields.PciDeviceStatus.CLAIMED,
                    fields.PciDeviceStatus.ALLOCATED))
            if addrs:
                claimed[host] = addrs
        return claimed

    def assert_pci_devices_of(self, server, want, guests=None, new=None,
                              failed=()):
        """Check the PCI devices of a server, on every host.

        :param want: {host: [addresses]}, the devices the instance must hold
            (in its pci_devices and claimed in the DB).
        :param guests: {host: [addresses]}, the hostdevs of its guests;
            by default the devices of the host the server runs on.
        :param new: {host: [addresses]}: the new devices of its migration
            context, if it must have one (the old ones are then ``want``).
        :param failed: the failed destinations, named in the messages.
        """
        uuid = server['id']
        inst = objects.Instance.get_by_uuid(
            self.ctxt, uuid, expected_attrs=['pci_devices'])
        hosts = self._host_of_node()
        if guests is None:
            guests = {inst.host: want.get(inst.host, [])}
        if new is not None:
            held = {}
            for host, addrs in list(want.items()) + list(new.items()):
                held[host] = sorted(held.get(host, []) + addrs)
        else:
            held = want
        problems = []
        got = self._pci_devices_by_host(inst.pci_devices, hosts)
        if got != held:
            problems.append(
                'PCI devices of instance.pci_devices are %s, expected %s' % (
                    got, held))
        claimed = self._claimed_by(uuid)
        if claimed != held:
            problems.append(
                'PCI devices claimed or allocated to the instance in the DB '
                'are %s, expected %s' % (claimed, held))
        mig_ctxt = objects.MigrationContext.get_by_instance_uuid(
            self.ctxt, uuid)
        if new is None and mig_ctxt is not None:
            problems.append(
                'PCI device check: the instance has a migration context '
                '(old PCI devices %s, new PCI devices %s) but no move is in '
                'progress' % (
                    self._pci_devices_by_host(
                        mig_ctxt.old_pci_devices, hosts),
                    self._pci_devices_by_host(
                        mig_ctxt.new_pci_devices, hosts)))
        elif new is not None:
            old_got = self._pci_devices_by_host(
                mig_ctxt and mig_ctxt.old_pci_devices, hosts)
            new_got = self._pci_devices_by_host(
                mig_ctxt and mig_ctxt.new_pci_devices, hosts)
            if (old_got, new_got) != (want, new):
                problems.append(
                    'PCI devices of the migration context are old %s and '
                    'new %s, expected old %s and new %s' % (
                        old_got, new_got, want, new))
        got_guests = self._guest_hostdevs(uuid)
        if got_guests != guests:
            problems.append(
                'PCI device hostdevs of the guests of the instance are %s, '
                'expected %s' % (got_guests, guests))
        if problems:
            self.fail(
                'PCI devices of %s are wrong (failed destinations: %s):\n'
                '  %s' % (uuid, sorted(failed), '\n  '.join(problems)))

    def _destinations(self, uuid):
        """[host] of the destinations that took the moves of the instance.

        The instance action events name the compute that ran them, in the
        order they ran. (The faults name CONF.host, the same for every
        compute of a functional test, and a rescheduled resize keeps its
        migration record.)
        """
        events = []
        for action in objects.InstanceActionList.get_by_instance_uuid(
                self.ctxt, uuid):
            for event in objects.InstanceActionEventList.get_by_action(
                    self.ctxt, action.id):
                if event.event in MOVE_EVENTS:
                    events.append((event.id, event.host))
        return [host for _, host in sorted(events)]

    # resize and cold migration

    def _resize_or_migrate(self, server, resize, failing, pinned=False):
        self.failing_destinations.update(failing)
        if resize:
            flavor_id = self._create_pci_flavor(memory_mb=1024, pinned=pinned)
            self.api.post_server_action(
                server['id'], {'resize': {'flavorRef': flavor_id}})
        else:
            self.api.post_server_action(server['id'], {'migrate': None})
        server = self._wait_for_state(server, 'VERIFY_RESIZE')
        self.assertEqual(set(), self.failing_destinations,
                         'a destination expected to fail was not tried')
        self.assertEqual(
            failing + [server['OS-EXT-SRV-ATTR:host']],
            self._destinations(server['id']),
            'the destinations tried are not the expected ones')
        return server

    def _confirm(self, server):
        """Confirm the resize; the source has freed its resources after it.

        (nova 18 to 20 set the migration confirmed before they free them.)
        """
        self.api.post_server_action(server['id'], {'confirmResize': None})
        self._wait_for_migration_status(server, ['confirmed'])
        self.notifier.wait_for_versioned_notifications(
            'instance.resize_confirm.end')
        return self._wait_for_state(server, 'ACTIVE')

    def _revert(self, server):
        """Revert the resize; fail with its fault if the server errors out.

        The source compute defines the guest again from the instance's PCI
        devices, the old ones of the migration context.
        """
        self.api.post_server_action(server['id'], {'revertResize': None})
        server = self._wait_for(server, {'OS-EXT-STS:task_state': None})
        if server['status'] == 'ERROR':
            fault = server.get('fault', {})
            self.fail(
                'Reverting the resize failed on the source, which defines the '
                'guest with the old PCI devices of the migration context: '
                '%s %s' % (fault.get('message'), fault.get('details', '')
                           .strip().splitlines()[-1:]))
        self._wait_for_migration_status(server, ['reverted'])
        self.notifier.wait_for_versioned_notifications(
            'instance.resize_revert.end')
        return self._wait_for_state(server, 'ACTIVE')

    def _test_move_then_confirm(self, resize, failing):
        self.flags(max_attempts=len(failing) + 1, group='scheduler')
        server = self._start_pci_hosts(len(failing) + 2)
        dest = 'compute%d' % (len(failing) + 2)

        server = self._resize_or_migrate(server, resize, failing)

        self.assertEqual(dest, server['OS-EXT-SRV-ATTR:host'])
        # The source devices are kept until the move is confirmed.
        self.assert_pci_devices_of(
            server, {'compute1': [self._address('compute1')]},
            guests={dest: [self._address(dest)]},
            new={dest: [self._address(dest)]}, failed=failing)

        server = self._confirm(server)
        self.assert_pci_devices_of(
            server, {dest: [self._address(dest)]}, failed=failing)
        self.assert_pci_invariants()

    def _test_move_then_revert(self, resize, failing):
        self.flags(max_attempts=len(failing) + 1, group='scheduler')
        server = self._start_pci_hosts(len(failing) + 2)
        dest = 'compute%d' % (len(failing) + 2)

        server = self._resize_or_migrate(server, resize, failing)
        self.assertEqual(dest, server['OS-EXT-SRV-ATTR:host'])

        server = self._revert(server)
        self.assertEqual('compute1', server['OS-EXT-SRV-ATTR:host'])
        self.assert_pci_devices_of(
            server, {'compute1': [self._address('compute1')]},
            failed=failing)
        self.assert_pci_invariants()

    def test_revert_resize(self):
        """The resize to compute2 is reverted to compute1.

        No destination fails. The tracker of compute2 allocates its device
        to the instance; the old PCI devices of the migration context, which
        the revert gives back to the instance and its guest on compute1,
        must be compute1's only.
        """
        self._test_move_then_revert(resize=True, failing=[])

    def test_revert_cold_migration(self):
        self._test_move_then_revert(resize=False, failing=[])

    def test_resize_first_destination_fails(self):
        """compute2 fails after its claim, compute3 takes the resize.

        The failed claim of compute2 is aborted; the resize is confirmed.
        """
        self._test_move_then_confirm(resize=True, failing=['compute2'])

    def test_resize_two_destinations_fail(self):
        """compute2 and compute3 fail after their claim, compute4 takes it.

        The claim of the second failed destination is aborted on a copy of
        the instance whose migration context is the first failed
        destination's, so nothing of compute3 was freed.
        """
        self._test_move_then_confirm(
            resize=True, failing=['compute2', 'compute3'])

    def test_resize_first_destination_fails_then_revert(self):
        """The resize rescheduled once is reverted to compute1.

        The revert restores the old PCI devices of the migration context,
        which the source guest is defined with.
        """
        self._test_move_then_revert(resize=True, failing=['compute2'])

    if pci_reschedule.PCIRescheduleTestBase.CAN_RESCHEDULE_PINNED_RESIZE:
        def test_resize_pinned_two_destinations_fail(self):
            """A guest with a pinned vCPU: compute2 and compute3 fail.

            Another guest pins a host CPU of compute3. The claim aborted on
            compute3 must free the host CPU it pinned there, as it frees the
            PCI device, at once. Aborted on the copy of the instance, which
            has the migration context of compute2, it unpins the CPU that
            compute2 pinned, which on compute3 is the other guest's, and
            leaves its own pinned until the next periodic task of compute3.
            """
            self._dedicate_host_cpus('0-3')
            self.flags(max_attempts=3, group='scheduler')
            server = self._start_pci_hosts(4, pinned=True)
            self._wait_for_state(self._create_server(
                self._create_flavor(
                    memory_mb=512, vcpu=1, disk=1, ephemeral=0,
                    extra_spec={'hw:cpu_policy': 'dedicated'}),
                host='compute3'), 'ACTIVE')
            pinned = {host: self._pinned_cpus(host) for host in self.computes}
            self.assertEqual(
                {'compute1': 1, 'compute2': 0, 'compute3': 1, 'compute4': 0},
                {host: len(cpus) for host, cpus in pinned.items()})

            server = self._resize_or_migrate(
                server, resize=True, failing=['compute2', 'compute3'],
                pinned=True)

            now = {host: self._pinned_cpus(host) for host in self.computes}
            self.assertEqual(1, len(now['compute4']))
            self.assertEqual(
                dict(pinned, compute4=now['compute4']), now,
                'the host CPUs pinned on each host')
            server = self._confirm(server)
            self.assert_pci_devices_of(
                server, {'compute4': [self._address('compute4')]},
                failed=['compute2', 'compute3'])
            self.assert_pci_invariants()

    def test_cold_migrate_first_destination_fails(self):
        self._test_move_then_confirm(resize=False, failing=['compute2'])

    def test_cold_migrate_two_destinations_fail(self):
        self._test_move_then_confirm(
            resize=False, failing=['compute2', 'compute3'])

    def test_cold_migrate_two_destinations_fail_then_revert(self):
        self._test_move_then_revert(
            resize=False, failing=['compute2', 'compute3'])

    if pci_reschedule.PCIRescheduleTestBase.HAS_LATE_CHECK_IN_PREP_RESIZE:
        def test_cold_migrate_late_anti_affinity(self):
            """compute2 refuses the migration in its late group policy check.

            prep_resize checks the policy before it claims anything, so
            there is nothing to abort on compute2.
            """
            self.flags(max_attempts=2, group='scheduler')
            group = self._create_group()
            server = self._start_pci_hosts(3, group=group)
            # Another member on compute2: the scheduler, not enforcing the
            # policy, picks compute2 first all the same.
            self._create_other_member(group, 'compute2')

            self.api.post_server_action(server['id'], {'migrate': None})
            server = self._wait_for_state(server, 'VERIFY_RESIZE')

            self.assertEqual('compute3', server['OS-EXT-SRV-ATTR:host'])
            self.assertEqual(
                ['compute2', 'compute3'], self._destinations(server['id']))
            server = self._confirm(server)
            self.assert_pci_devices_of(
                server, {'compute3': [self._address('compute3')]},
                failed=['compute2'])
            self.assert_pci_invariants()

    # evacuation

    def test_evacuate_late_anti_affinity_then_retry(self):
        """compute2 refuses the evacuation in its late group policy check.

        Evacuation has no reschedule: the check runs inside the rebuild
        claim, the claim is aborted and the evacuation fails. The operator
        evacuates the server again, to compute3.
        """
        group = self._create_group()
        server = self._start_pci_hosts(3, group=group)
        # Another member on compute2: the scheduler, not enforcing the
        # policy, picks compute2 first all the same.
        self._create_other_member(group, 'compute2')
        self.computes['compute1'].stop()
        self.api.put_service(
            self._service_id('compute1'), {'forced_down': True})

        self.api.post_server_action(server['id'], {'evacuate': {}})
        self._wait_for_migration_status(server, ['failed'])
        server = self._wait_for(
            server, {'OS-EXT-SRV-ATTR:host': 'compute1',
                     'OS-EXT-STS:task_state': None})
        self.assertEqual(['compute2'], self._destinations(server['id']))
        # The source is down: its device stays with the instance.
        self.assert_pci_devices_of(
            server, {'compute1': [self._address('compute1')]},
            guests={'compute1': [self._address('compute1')]},
            failed=['compute2'])

        self.api.post_server_action(
            server['id'], {'evacuate': {'host': 'compute3'}})
        self._wait_for_migration_status(server, ['done'])
        server = self._wait_for(
            server, {'OS-EXT-SRV-ATTR:host': 'compute3',
                     'OS-EXT-STS:task_state': None})
        self.assertEqual(
            ['compute2', 'compute3'], self._destinations(server['id']))
        # The source is still down: it frees its device when it comes back.
        self.assert_pci_devices_of(
            server, {'compute1': [self._address('compute1')],
                     'compute3': [self._address('compute3')]},
            guests={'compute1': [self._address('compute1')],
                    'compute3': [self._address('compute3')]},
            failed=['compute2'])

        # The source comes back, deletes its evacuated guest and frees its
        # device.
        self.restart_compute_service('compute1')
        self.assert_pci_devices_of(
            server, {'compute3': [self._address('compute3')]},
            failed=['compute2'])
        self.assert_pci_invariants()

    # unshelve

    def test_unshelve_spawn_fails_then_unshelve_elsewhere(self):
        """The guest of the unshelved server fails to spawn on compute2.

        Unshelve has no reschedule: the instance claim is aborted and the
        server is shelved offloaded again. The operator unshelves it to
        compute3.
        """
        self.flags(shelved_offload_time=0)
        server = self._start_pci_hosts(3)
        self.api.post_server_action(server['id'], {'shelve': None})
        # The server is SHELVED_OFFLOADED before the compute has freed
        # its device: wait for the end of the offload.
        server = self._wait_for(
            server, {'status': 'SHELVED_OFFLOADED',
                     'OS-EXT-STS:task_state': None,
                     'OS-EXT-SRV-ATTR:host': None})
        self.notifier.wait_for_versioned_notifications(
            'instance.shelve_offload.end')
        self.assert_pci_devices_of(server, {}, guests={})

        error = fakelibvirt.make_libvirtError(
            fakelibvirt.libvirtError, 'injected: the guest failed',
            error_code=fakelibvirt.VIR_ERR_INTERNAL_ERROR)
        spawn = self.useFixture(fixtures.MockPatchObject(
            self.computes['compute2'].driver, 'spawn',
            side_effect=error)).mock
        self.api.post_server_action(server['id'], {'unshelve': None})
        self._wait_for_action_fail_completion(
            server, 'unshelve', 'compute_unshelve_instance')
        server = self._wait_for_state(server, 'SHELVED_OFFLOADED')
        self.assertEqual(
            vm_states.SHELVED_OFFLOADED,
            objects.Instance.get_by_uuid(self.ctxt, server['id']).vm_state)
        spawn.assert_called_once()
        self.assertEqual(['compute2'], self._destinations(server['id']))
        self.assert_pci_devices_of(
            server, {}, guests={}, failed=['compute2'])

        self._unshelve(server, 'compute3')
        server = self._wait_for_state(server, 'ACTIVE')
        self.assertEqual(
            ['compute2', 'compute3'], self._destinations(server['id']))
        self.assert_pci_devices_of(
            server, {'compute3': [self._address('compute3')]},
            failed=['compute2'])
        self.assert_pci_invariants()
