# Test-only stdout callback: one JSON document with every task's per-host results and the recap stats.
# ansible-core ships no JSON callback (the json one lives in a collection Debian packages separately).
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "isolate_test_json"

    def __init__(self):
        super(CallbackModule, self).__init__()
        self.tasks = []

    def v2_playbook_on_task_start(self, task, is_conditional):
        self.tasks.append({"task": {"name": task.get_name()}, "hosts": {}})

    def _record(self, result, **extra):
        r = dict(result._result)
        r.update(extra)
        self.tasks[-1]["hosts"][result._host.get_name()] = r

    def v2_runner_on_ok(self, result):
        self._record(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._record(result, failed=True)

    def v2_runner_on_skipped(self, result):
        self._record(result, skipped=True)

    def v2_playbook_on_stats(self, stats):
        hosts = sorted(stats.processed.keys())
        doc = {"plays": [{"tasks": self.tasks}], "stats": dict((h, stats.summarize(h)) for h in hosts)}
        self._display.display(json.dumps(doc, default=str))
