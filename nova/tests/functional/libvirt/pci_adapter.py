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

from nova.tests.fixtures import libvirt as fakelibvirt
from nova.tests.functional import integrated_helpers
from nova.tests.functional.libvirt import base

__all__ = ['fakelibvirt', 'ServersTestBase']


class ServersTestBase(base.ServersTestBase):

    if not hasattr(integrated_helpers._IntegratedTestBase, 'CAST_AS_CALL'):
        CAST_AS_CALL_FIXTURE = 'nova.tests.fixtures.CastAsCallFixture'
