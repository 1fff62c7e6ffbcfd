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
object, not a host by name.
"""

from nova import conf
from nova.tests.fixtures import libvirt as fakelibvirt
from nova.tests.functional.libvirt import base

__all__ = ['fakelibvirt', 'ServersTestBase']

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
