"""tox's inline plugin: the environments of every line of bases.ini.

functional-LINE, reproduce-LINE, mutants-LINE and export-LINE for each
line (see nova_fork/toxenvs.py), so that a new line needs no tox.ini edit.
"""

import pathlib
import sys

from tox.config.loader.memory import MemoryLoader
from tox.config.types import Command
from tox.plugin import impl

ROOT = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from nova_fork import toxenvs  # noqa: E402


@impl
def tox_extend_envs():
    return tuple(toxenvs.envs(ROOT))


@impl
def tox_add_core_config(core_conf, state):
    posargs = state.conf.pos_args(None) or ()
    for name, (description, commands) in toxenvs.envs(ROOT, posargs).items():
        state.conf.memory_seed_loaders[name].append(MemoryLoader(
            description=description,
            commands=[Command(argv) for argv in commands]))
