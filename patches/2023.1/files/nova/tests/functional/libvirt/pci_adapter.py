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

"""The functional test API of nova 27 (2023.1), for the PCI test suite.

See the shared module of the same name (nova 28 on): nova 27's
_IntegratedTestBase has no CAST_AS_CALL switch (2023.2 added it) and always
makes RPC casts calls, with CastAsCallFixture.
"""

from nova.tests.fixtures import libvirt as fakelibvirt
from nova.tests.functional.libvirt import base

__all__ = ['fakelibvirt', 'ServersTestBase']


class ServersTestBase(base.ServersTestBase):

    CAST_AS_CALL_FIXTURE = 'nova.tests.fixtures.CastAsCallFixture'
