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

import collections
import time

from oslo_utils import units

from nova.compute import vm_states
from nova import context as nova_context
from nova import objects
from nova.tests.functional.libvirt import pci_reschedule


class Bug1860555RegressionTest(pci_reschedule.PCIRescheduleTestBase):
    """Regression test for bug 1860555: PCI devices survive a reschedule.

    Several servers of an anti-affinity server group that request PCI devices
    are created at the same time. The scheduler can place two members of the
    group on the same host, as racing schedulers do (here the scheduler
    service runs without the ServerGroupAntiAffinityFilter and its RAM
    weigher steers every member to the same host). nova-compute's late group
    policy check, ``ComputeManager._validate_instance_group_policy``, then
    refuses the second member inside ``rt.instance_claim()`` and the build is
    rescheduled to an alternate host.

    The resource tracker had already allocated the first host's PCI devices
    to the instance, which appends them to ``instance.pci_devices``. The
    claim is aborted on a *clone* of the instance (nova/compute/claims.py)
    and the PCI tracker frees the devices without passing the instance
    (``PciDeviceManager._free_device(dev)``), so the devices of the first
    host are never removed from ``instance.pci_devices``. That instance goes
    back to the conductor and on to the next host, whose libvirt driver
    builds a guest with a hostdev for every device in
    ``instance.pci_devices``: the first host's devices too. If the addresses
    collide libvirt refuses the guest (``Device 0000:81:00.0 is already in
    use``) and, once the retries are exhausted, the server goes to ERROR;
    otherwise the guest silently gets PCI devices it was never allocated.

    The fake libvirt used here refuses a PCI device used twice, like the real
    one, and every test ends by checking the PCI invariants on every host.
    """

    GROUP_NAME = 'bug-1860555'

    # helpers

    def _create_members(self, group, flavor_id, count, host=None):
        """Create count members of the group with one request.

        The API returns at once; the members are scheduled and built
        concurrently.
        """
        self._create_server(flavor_id, host=host, group=group, count=count)

    def _wait_for_builds(self, count, timeout=60):
        """Wait for count servers to exist and to be done building."""
        ctxt = nova_context.get_admin_context()
        deadline = time.time() + timeout
        while True:
            # Polling the DB is much cheaper than polling the API.
            instances = objects.InstanceList.get_all(ctxt)
            if len(instances) == count and all(
                inst.vm_state in (vm_states.ACTIVE, vm_states.ERROR) and
                inst.task_state is None
                for inst in instances
            ):
                return self.api.get_servers()
            if time.time() > deadline:
                self.fail(
                    'Servers still building: %s\nBuild failures other than '
                    'the anti-affinity reschedules: %s' % (
                        [(inst.uuid, inst.vm_state, inst.task_state)
                         for inst in instances],
                        self._other_build_failures()))
            time.sleep(0.1)

    def _create_error_notifications(self):
        """[(instance uuid, host, exception, message)] of failed builds."""
        failures = []
        for notification in self.notifier.versioned_notifications:
            if notification['event_type'] != 'instance.create.error':
                continue
            data = notification['payload']['nova_object.data']
            fault = data['fault']['nova_object.data']
            failures.append((
                data['uuid'], notification['publisher_id'].split(':')[-1],
                fault['exception'], fault['exception_message']))
        return failures

    @staticmethod
    def _is_policy_rejection(failure):
        # nova 26 on raise GroupAffinityViolation in the late check, older
        # releases a RescheduledException that names the group policy.
        _, _, exc, message = failure
        return exc == 'GroupAffinityViolation' or (
            exc == 'RescheduledException' and
            'instance group policy was violated' in message)

    def _policy_rejections(self):
        """[(instance uuid, host)] refused by the late group policy check."""
        return [
            failure[:2] for failure in self._create_error_notifications()
            if self._is_policy_rejection(failure)]

    def _other_build_failures(self):
        """Failed builds not due to the late group policy check."""
        return [
            failure for failure in self._create_error_notifications()
            if not self._is_policy_rejection(failure)]

    def assert_rescheduled_by_policy(self, minimum):
        """Assert the compute's late affinity check really rescheduled."""
        rejections = self._policy_rejections()
        self.assertGreaterEqual(
            len(rejections), minimum,
            'Expected at least %d builds refused by the late anti-affinity '
            'check of nova-compute, got %s; the scenario did not exercise a '
            'reschedule' % (minimum, rejections))
        return rejections

    def assert_servers_active(self, servers):
        """Assert every server is ACTIVE; else show why it failed."""
        failed = [s for s in servers if s['status'] != 'ACTIVE']
        if failed:
            self.fail(
                'Servers expected to be ACTIVE went to %s:\n  %s\n'
                'Build failures other than the anti-affinity reschedules '
                '(instance, host, exception, message):\n  %s' % (
                    sorted(set(s['status'] for s in failed)),
                    '\n  '.join(
                        '%s: %s' % (s['id'], s.get('fault', {}).get('message'))
                        for s in failed),
                    '\n  '.join(
                        str(f) for f in self._other_build_failures())))

    def assert_guest_pci_devices(self, servers, num_devices):
        """Assert every guest has exactly its requested PCI devices."""
        problems = []
        for server in servers:
            host = server['OS-EXT-SRV-ATTR:host']
            hostdevs = self._guest_hostdevs_on(host, server['id'])
            if hostdevs is None or len(hostdevs) != num_devices:
                problems.append(
                    'guest of %s on %s has PCI device hostdevs %s, %d '
                    'requested' % (server['id'], host, hostdevs, num_devices))
        if problems:
            self.fail(
                'PCI device hostdevs of the guests are wrong:\n  %s' %
                '\n  '.join(problems))

    def assert_members_spread(self, servers, max_server_per_host=1):
        per_host = collections.Counter(
            s['OS-EXT-SRV-ATTR:host'] for s in servers)
        for host, count in per_host.items():
            self.assertLessEqual(
                count, max_server_per_host,
                'Anti-affinity violated on %s: %s' % (host, per_host))

    def _test_reschedule(self, layout, num_devices=1):
        """Two members, both scheduled to compute1, one rescheduled.

        compute1 refuses the member that claims there second, which then
        has to boot on compute2, the only other host, and both members end
        ACTIVE with their own num_devices devices each.
        """
        self.flags(max_attempts=2, group='scheduler')
        self._start_hosts(layout)
        group = self._create_group()
        self._create_members(group, self._create_pci_flavor(num_devices), 2)
        servers = self._wait_for_builds(2)

        self.assertEqual(
            ['compute1'], [h for _, h in self.assert_rescheduled_by_policy(1)])
        self.assert_servers_active(servers)
        self.assert_members_spread(servers)
        self.assert_guest_pci_devices(servers, num_devices)
        self.assert_pci_invariants()

    # scenarios

    def test_reschedule_same_pci_address(self):
        """The devices of both hosts share their addresses.

        compute1 has 0000:81:00.0 and 0000:81:01.0, compute2 has
        0000:81:01.0. Both members are scheduled to compute1; the one that
        claims second gets 0000:81:01.0 and is refused by compute1's late
        affinity check. It is rescheduled to compute2 carrying compute1's
        0000:81:01.0 in its pci_devices next to compute2's own 0000:81:01.0.
        libvirt refuses a guest with the same device twice, and with no
        retries left the server goes to ERROR.
        """
        self._test_reschedule(
            [self._devices(2), self._devices(1, first_slot=1)])

    def test_reschedule_distinct_pci_addresses(self):
        """Two hosts whose devices have different addresses.

        The rescheduled member boots on compute2, and its guest gets its
        device of compute1 (0000:81:0x.0) as an extra hostdev next to its own
        0000:82:00.0.
        """
        self._test_reschedule(
            [self._devices(2), self._devices(1, bus=0x82)])

    # In the concurrent scenario the rejected members share the same list of
    # alternate hosts (compute3, compute4, ...). With PCI in placement the
    # alternates of a multi-create also share the same allocation candidate,
    # so at most one rescheduled member can land on each alternate host (the
    # conductor skips an alternate whose candidate is already consumed);
    # hence more hosts, which need one device only.
    CONCURRENT_HOSTS = 4
    CONCURRENT_ALTERNATE_DEVICES = 4

    def test_concurrent_members_many_collisions(self):
        """Eight members created concurrently, two allowed per host.

        compute1 and compute2 have four devices each, 0000:81:00.0 to
        0000:81:03.0, and about the same RAM, more than the other hosts, so
        the scheduler splits the eight members between them (four each, all
        their devices). Each keeps two and rejects two. The four rejected
        members, carrying 0000:81:02.0 or 0000:81:03.0, are rescheduled to
        compute3 (the same four devices), which keeps two and rejects two,
        which go on to compute4. With PCI in placement every alternate host
        (one device, 0000:81:00.0) gets one of them. Stale devices collide
        all along the way.
        """
        hosts = self.CONCURRENT_HOSTS
        self.flags(max_attempts=hosts - 1, group='scheduler')
        ram_mb = [24 * units.Ki, 24 * units.Ki - 256] + [
            (16 - i) * units.Ki for i in range(hosts - 2)]
        self._start_hosts(
            [self._devices(4), self._devices(4)] +
            [self._devices(self.CONCURRENT_ALTERNATE_DEVICES)] * (hosts - 2),
            ram_mb=ram_mb)
        group = self._create_group(max_server_per_host=2)
        self._create_members(group, self._create_pci_flavor(), 8)
        servers = self._wait_for_builds(8)

        rejections = self.assert_rescheduled_by_policy(4)
        first = collections.Counter(
            h for _, h in rejections if h in ('compute1', 'compute2'))
        self.assertEqual(
            {'compute1': 2, 'compute2': 2}, first, rejections)
        self.assert_servers_active(servers)
        self.assert_members_spread(servers, max_server_per_host=2)
        self.assert_guest_pci_devices(servers, 1)
        self.assert_pci_invariants()

    def test_reschedule_retries_exhausted(self):
        """Every candidate host already holds a member of the group.

        One member runs on compute1 and one on compute2. A third member is
        scheduled to compute1 (the RAM weigher), refused there, rescheduled to
        compute2, refused there too, and with no retries left goes to ERROR.
        Every device it claimed on either host must be free again.
        """
        self.flags(max_attempts=2, group='scheduler')
        self._start_hosts([self._devices(2), self._devices(2)])
        group = self._create_group()
        flavor_id = self._create_pci_flavor()
        self._create_members(group, flavor_id, 1, host='compute1')
        self._create_members(group, flavor_id, 1, host='compute2')
        self._wait_for_builds(2)
        self.assertEqual([], self._policy_rejections())

        self._create_members(group, flavor_id, 1)
        servers = self._wait_for_builds(3)

        rejections = self.assert_rescheduled_by_policy(2)
        failed = [s for s in servers if s['status'] == 'ERROR']
        self.assertEqual(1, len(failed), servers)
        self.assertEqual(
            [(failed[0]['id'], 'compute1'), (failed[0]['id'], 'compute2')],
            rejections)
        self.assertIn(
            'Exceeded maximum number of retries',
            failed[0]['fault']['message'])
        active = [s for s in servers if s['status'] == 'ACTIVE']
        self.assertEqual(2, len(active), servers)
        self.assert_members_spread(active)
        self.assert_guest_pci_devices(active, 1)
        self.assert_pci_invariants()

    def test_reschedule_two_devices(self):
        """A flavor asking for two devices; same addresses on both hosts.

        compute1 has 0000:81:00.0 to 0000:81:03.0, compute2 has 0000:81:02.0
        and 0000:81:03.0. The member rejected by compute1 claimed there second
        and arrives on compute2 with compute1's 0000:81:02.0 and 0000:81:03.0,
        the addresses of compute2's two devices.
        """
        self._test_reschedule(
            [self._devices(4), self._devices(2, first_slot=2)],
            num_devices=2)


if Bug1860555RegressionTest.HAS_PCI_IN_PLACEMENT:
    class Bug1860555PCIInPlacementRegressionTest(Bug1860555RegressionTest):
        """The same scenarios with PCI devices tracked in placement."""

        PCI_IN_PLACEMENT = True
        CONCURRENT_HOSTS = 6
        CONCURRENT_ALTERNATE_DEVICES = 1
