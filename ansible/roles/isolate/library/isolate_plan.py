#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: 2026 isolate maintainers
# Apache-2.0
"""Ansible module: converge a host with isolate, reporting exactly what isolate's plan says."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: isolate_plan
short_description: Plan (and optionally apply) isolate's changes on a host
description:
  - Runs C(isolate plan --dry-run --json). The task is C(changed) exactly when the plan has changes;
    with C(--diff) the plan's changes are shown as the diff (C(TARGET SETTING = VALUE) lines).
  - In check mode nothing is written; I(policy_content), when given, is planned instead of the
    installed policy (check mode has not written the new one).
  - With I(apply=true) and not in check mode, runs C(isolate apply --yes --json) when the plan has
    changes, then plans again and fails unless the host converged. A failed apply fails the task
    with isolate's own error (isolate has already rolled back what it wrote).
options:
  root: {description: Host root isolate reads (its --root)., type: path, default: /}
  bin: {description: The isolate executable., type: path, default: /usr/bin/isolate}
  policy: {description: Policy file; default is isolate's lookup (ROOT/etc/isolate/policy.yaml)., type: path}
  policy_content: {description: Policy YAML to plan with instead (check mode)., type: str}
  apply: {description: Apply the changes (apply-once hosts without the agent)., type: bool, default: false}
  force: {description: Pass --force to apply (memory.max below current usage)., type: bool, default: false}
"""

import json
import os
import tempfile

from ansible.module_utils.basic import AnsibleModule


def describe(value):
    if value is None:
        return "(none)"
    if value == "":
        return '""'
    return value


def diff_of(changes, root):
    before = []
    after = []
    for c in changes:
        key = "%s %s %s" % (c.get("backend", "cgroupfs"), c["target"], c["setting"])
        before.append("%s = %s\n" % (key, describe(c.get("from"))))
        after.append("%s = %s\n" % (key, describe(c.get("to"))))
    return dict(
        before="".join(before),
        after="".join(after),
        before_header="%s: now" % root,
        after_header="%s: isolate plan" % root,
    )


def run_isolate(module, args):
    rc, out, err = module.run_command([module.params["bin"]] + args, environ_update={"ISOLATE_LOG": "off"})
    return rc, out, err


def plan(module, policy):
    args = ["plan", "--dry-run", "--json", "--root", module.params["root"]]
    if policy:
        args += ["--policy", policy]
    rc, out, err = run_isolate(module, args)
    if rc != 0:
        module.fail_json(msg="isolate plan failed: %s" % (err or out).strip(), rc=rc, stderr=err)
    try:
        return json.loads(out)
    except ValueError:
        module.fail_json(msg="isolate plan --json printed no JSON", stdout=out, stderr=err)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            root=dict(type="path", default="/"),
            bin=dict(type="path", default="/usr/bin/isolate"),
            policy=dict(type="path"),
            policy_content=dict(type="str"),
            apply=dict(type="bool", default=False),
            force=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    p = module.params
    if not os.access(p["bin"], os.X_OK):
        if module.check_mode:
            # The install task has not run (check mode): a first install always changes the host.
            module.exit_json(changed=True, msg="%s is not installed yet; the host would be converged" % p["bin"])
        module.fail_json(msg="%s is not installed" % p["bin"])

    policy = p["policy"]
    tmp = None
    if p["policy_content"] is not None:
        fd, tmp = tempfile.mkstemp(prefix="isolate-policy-", suffix=".yaml")
        with os.fdopen(fd, "w") as f:
            f.write(p["policy_content"])
        policy = tmp
    try:
        first = plan(module, policy)
    finally:
        if tmp:
            os.unlink(tmp)
    changes = first.get("changes", [])
    result = dict(
        changed=len(changes) > 0,
        changes=changes,
        allocation=first.get("allocation", {}),
        plan_warnings=first.get("warnings", []),
        fingerprint=first.get("fingerprint"),
    )
    if module._diff and changes:
        result["diff"] = diff_of(changes, p["root"])
    if module.check_mode or not p["apply"] or not changes:
        module.exit_json(**result)

    args = ["apply", "--yes", "--json", "--root", p["root"]]
    if p["policy"]:
        args += ["--policy", p["policy"]]
    if p["force"]:
        args.append("--force")
    rc, out, err = run_isolate(module, args)
    if rc != 0:
        outcome = {1: "refused before any write", 2: "rolled back", 3: "ROLLBACK INCOMPLETE"}.get(rc, "failed")
        module.fail_json(msg="isolate apply %s (exit %d): %s" % (outcome, rc, (err or out).strip()), rc=rc, **result)
    try:
        result["applied"] = json.loads(out)
    except ValueError:
        result["applied"] = out
    left = plan(module, p["policy"]).get("changes", [])
    if left:
        module.fail_json(
            msg="isolate apply succeeded but the host has not converged: %d changes are still planned" % len(left),
            left=left,
            **result
        )
    module.exit_json(**result)


if __name__ == "__main__":
    main()
