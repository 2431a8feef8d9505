# Guest-only (role-systemd): every Ansible task runs its module as a fresh python3 that imports
# ansible.module_utils from the AnsiballZ payload, a zip with no .pyc in it, so each task compiles
# module_utils.basic and its ~60 imports again: 2.3 s a task under TCG against 1.15 s from compiled
# files (measured in this guest). The controller is this same host's ansible-core, so the installed
# module_utils are the very files the payload carries: serve them from there, where Debian compiled
# them at install. A name the installed tree lacks (a role's own module_utils) still comes from the
# payload; the modules themselves, their arguments and the controller are untouched.
# Loaded by a .pth file in dist-packages (site runs its import line at every interpreter start).
import importlib.machinery
import os
import sys

_PREFIX = "ansible.module_utils."
_INSTALLED = "/usr/lib/python3/dist-packages"


class _InstalledModuleUtils:
    @staticmethod
    def find_spec(fullname, path=None, target=None):
        if not fullname.startswith(_PREFIX):
            return None
        parent = os.path.join(_INSTALLED, *fullname.split(".")[:-1])
        return importlib.machinery.PathFinder.find_spec(fullname, [parent])


sys.meta_path.insert(0, _InstalledModuleUtils)
