#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: 2026 isolate maintainers
# Apache-2.0
"""Ansible module: write an isolate policy only after the host's own isolate accepts it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: isolate_policy
short_description: Validate an isolate policy on the host, then install it
description:
  - Writes I(content) to I(dest) only after C(isolate policy validate --root ROOT) accepted it on the
    target host, so an invalid policy never replaces a working one.
  - On rejection the task fails with the validator's message and I(dest) is left as it was.
  - Supports check mode (the candidate is still validated) and diff mode (the policy text).
options:
  content: {description: Policy YAML text., type: str, required: true}
  root: {description: Host root isolate reads (its --root)., type: path, default: /}
  dest: {description: Policy path; defaults to ROOT/etc/isolate/policy.yaml., type: path}
  bin: {description: The isolate executable., type: path, default: /usr/bin/isolate}
  mode: {description: File mode of I(dest)., type: raw, default: '0644'}
"""

import os
import tempfile

from ansible.module_utils.basic import AnsibleModule


def read(path):
    try:
        with open(path, "r") as f:
            return f.read()
    except (IOError, OSError):
        return None


def main():
    module = AnsibleModule(
        argument_spec=dict(
            content=dict(type="str", required=True),
            root=dict(type="path", default="/"),
            dest=dict(type="path"),
            bin=dict(type="path", default="/usr/bin/isolate"),
            mode=dict(type="raw", default="0644"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    root = p["root"]
    dest = p["dest"] or os.path.join(root, "etc/isolate/policy.yaml")
    content = p["content"]
    if not content.endswith("\n"):
        content += "\n"
    before = read(dest)
    result = dict(changed=before != content, dest=dest)
    if module._diff:
        result["diff"] = dict(before=before or "", after=content, before_header=dest, after_header=dest)

    have_bin = os.access(p["bin"], os.X_OK)
    if not have_bin and not module.check_mode:
        module.fail_json(msg="%s is not installed: install isolate before its policy" % p["bin"], **result)
    if not result["changed"] and not module.check_mode:
        module.exit_json(**result)

    dest_dir = os.path.dirname(dest)
    if not os.path.isdir(dest_dir):
        if module.check_mode:
            dest_dir = None
        else:
            os.makedirs(dest_dir, 0o755)
    # The candidate sits beside dest so the final rename is atomic on the same filesystem.
    fd, tmp = tempfile.mkstemp(prefix=".policy.", suffix=".yaml", dir=dest_dir)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(content)
        if have_bin:
            rc, out, err = module.run_command([p["bin"], "policy", "validate", "--root", root, tmp])
            if rc != 0:
                # Name the candidate after its destination, not the random temporary name.
                why = (err or out).strip().replace(tmp, "%s (new)" % dest)
                module.fail_json(
                    msg="isolate policy validate rejected the new policy; %s was left unchanged: %s" % (dest, why),
                    rc=rc,
                    changed=False,
                )
        else:
            module.warn("%s is not installed yet: the policy was not validated in check mode" % p["bin"])
        if module.check_mode or not result["changed"]:
            module.exit_json(**result)
        os.chmod(tmp, int(str(p["mode"]), 8))
        module.atomic_move(tmp, dest)
        tmp = None
    finally:
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
