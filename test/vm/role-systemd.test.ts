// The Ansible role (ansible/roles/isolate) on a real Debian userland with systemd 252 as PID 1: the
// guest runs the real ansible-playbook (Debian's ansible-core, in a rootfs variant of harness/rootfs.ts)
// over the local connection against itself. The role installs the .deb made by `npm run package`,
// validates and writes the policy, enables and starts isolate.service; the agent comes up and moves the
// already running Kafka stand-in onto a whole core of one node, away from a YARN-like container.
// Asserted from /proc/<pid>/task/*/status, `isolate check` and the agent's metrics; the second
// playbook run reports changed=0. Then, sharing the boot: version N+1 (the same build, its Version
// raised) is installed over N with dpkg -i while the agent runs, every Kafka and YARN thread's allowed
// CPUs sampled from /proc every 100 ms throughout (not one sample may show YARN on Kafka's CPUs or Kafka
// off them); the new agent adopts N's policy, journal, baseline and assignment byte for byte, nothing
// rolled back. Then dpkg -r rolls the host back (prerm) and dpkg --purge removes /var/lib/isolate. Last,
// isolate installed and applied again with its agent running, the role's isolate_state: absent, in check
// mode (what would be undone; nothing changes) and for real: the agent stopped, the rollback, the
// package purged with /var/lib/isolate, the metrics textfile and drop-in gone, and every cgroup setting
// and Kafka's unit properties as before isolate first ran. The first run starts the agent exactly once
// (isolate_metrics: both, so node_exporter's textfile too); the check-mode run before it is
// docs/ansible.md's sample.
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CpuSet } from '../../src/model/cpuset.js';
import { LAYOUTS, systemdRootfs } from './harness/index.js';
import { REPO_ROOT } from './harness/paths.js';
import { parseState, SECTIONS, TASKS, held, waitforShell } from './support/guest.js';
import { ROLE_ROOTFS_PACKAGES } from './support/rootfs-variants.js';
import { vmScenario } from './support/scenario.js';
import { expectDocSample } from '../support/doc-samples.js';

/** Where Debian's python3 finds installed packages (and runs .pth files at start). */
const DIST_PACKAGES = '/usr/lib/python3/dist-packages';

const PLAYBOOK = `---
- name: Install isolate on this guest and converge it
  hosts: localhost
  connection: local
  gather_facts: false
  vars:
    ansible_python_interpreter: /usr/bin/python3
  roles:
    - role: isolate
      vars:
        isolate_deb_src: /root/isolate_0.1.0_amd64.deb
        # node_exporter's textfile and the agent's own endpoint (the metrics drop-in, from the first start).
        isolate_metrics: both
        isolate_policy:
          apiVersion: isolate/v1
          kind: HostPolicy
          reserved: { cores: 1 }
          strict: false
          workloads:
            - { name: kafka, class: exclusive, cores: 1, match: { systemdUnit: kafka.service } }
            - { name: flink, class: batch, match: { cgroup: /hadoop-yarn } }
`;

// Waits count seconds (each round runs isolate or systemctl, seconds of TCG).
const SCRIPT = String.raw`
# Pipelining: each module runs in one python process fed on stdin, no temporary files (TCG is slow).
export LC_ALL=C.UTF-8 ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 ANSIBLE_LOCAL_TEMP=/root/.ansible/tmp ANSIBLE_PIPELINING=1
CG=/sys/fs/cgroup
${SECTIONS}
${waitforShell({ cap: 120, step: 1, quiet: true })}
${TASKS}
kpid() { systemctl show -P MainPID kafka.service; }
threads() {
  sec "$1"
  tasks kafka $(kpid)
  tasks yarn $(cat $CG/hadoop-yarn/*/cgroup.procs 2>/dev/null)
  endsec "$1"
}
# Every setting isolate may write, of every cgroup, and Kafka's unit properties: "as before isolate".
settings() {
  sec "$1"
  ( cd $CG && find . -type d | sort | while read d; do
      for f in cgroup.subtree_control cpuset.cpus cpuset.mems cpuset.cpus.partition memory.min memory.low memory.high memory.max cpu.weight; do
        [ -f "$d/$f" ] && echo "$d/$f=$(cat $d/$f)"
      done
    done )
  systemctl show -p AllowedCPUs -p AllowedMemoryNodes -p MemoryLow -p MemoryHigh -p MemoryMax -p CPUWeight -p Slice kafka.service | sed 's/^/kafka.service:/'
  endsec "$1"
}
playbook() {
  sec "$1"
  local t0=$(date +%s)
  (cd /root/ansible && ansible-playbook -i localhost, -c local site.yml $2)
  echo "rc=$?"
  echo "seconds=$(( $(date +%s) - t0 ))"
  endsec "$1"
}

mkdir -p $CG/hadoop-yarn
yarn-container 1 3 sleep >/dev/null
sec before
command -v isolate || echo "no isolate"
echo "kafka=$(systemctl is-active kafka.service)"
endsec before
threads unfenced
settings pristine
playbook check0 "--check --diff"
sec staged
command -v isolate || echo "no isolate"
ls -d /tmp/isolate-check.* 2>/dev/null || echo "no staging directory"
echo "unit=$(systemctl is-enabled isolate.service 2>&1)"
test -e /etc/isolate/policy.yaml || echo "no policy"
endsec staged
playbook run1
sec service
echo "active=$(systemctl is-active isolate.service)"
echo "enabled=$(systemctl is-enabled isolate.service)"
echo "timer=$(systemctl is-enabled isolate-check.timer) $(systemctl is-active isolate-check.timer)"
dpkg -s isolate | grep -E '^(Status|Version):'
echo "policy-sha=$(sha256sum < /etc/isolate/policy.yaml | cut -d' ' -f1)"
# How often the agent started: systemd's own lines, and the agent's first policy load of each start.
echo "starts=$(journalctl -u isolate.service -o cat --no-pager | grep -c '^Started isolate.service')"
echo "loads=$(journalctl -u isolate.service -o cat --no-pager | grep -c '"msg":"policy loaded"')"
echo "exec=$(systemctl show -P ExecStart isolate.service | grep -o 'argv\[\]=[^;]*')"
endsec service
sec policy; cat /etc/isolate/policy.yaml; endsec policy
sec converge; waitfor 'isolate check'; endsec converge
threads fenced
sec siblings; for c in /sys/devices/system/cpu/cpu[0-9]*; do echo "$(basename $c) $(cat $c/topology/thread_siblings_list) $(ls -d $c/node* | sed 's/.*node//')"; done; endsec siblings
sec check; isolate check; echo "rc=$?"; endsec check
sec metrics
exec 3<>/dev/tcp/127.0.0.1/9464 && printf 'GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n' >&3 && grep '^isolate_' <&3
exec 3>&-
endsec metrics
sec textfile
waitfor 'test -s /var/lib/prometheus/node-exporter/isolate.prom'
stat -c 'mode=%a' /var/lib/prometheus/node-exporter/isolate.prom
grep -E '^isolate_(policy_valid|exclusive_cpus)' /var/lib/prometheus/node-exporter/isolate.prom
endsec textfile
playbook run2
sec after; echo "active=$(systemctl is-active isolate.service)"; echo "policy-sha=$(sha256sum < /etc/isolate/policy.yaml | cut -d' ' -f1)"; endsec after
# Drift the agent corrects: a second apply folds the first journal into the baseline, so the upgrade
# below has a journal, a baseline and an assignment to carry over.
sec drift
yarn_cpus=$(cat $CG/hadoop-yarn/cpuset.cpus)
echo "yarn-cpus=$yarn_cpus"
echo 0-7 > $CG/hadoop-yarn/cpuset.cpus; echo "drift-rc=$?"
waitfor '[ "$(cat $CG/hadoop-yarn/cpuset.cpus)" = "$yarn_cpus" ] && [ -e /var/lib/isolate/baseline.json ]'
ls -1 /var/lib/isolate
endsec drift
sec converged2; waitfor 'isolate check'; endsec converged2
# Version N+1 over N while the agent runs, sampled from /proc every 100 ms throughout (sampler(),
# support/proc-sampler.sh); "mark" lines say where the upgrade starts and ends.
state_sums() { sha256sum /etc/isolate/policy.yaml /var/lib/isolate/*.json; }
. /root/proc-sampler.sh
sec upgrade
K=$(kpid)
KS="/proc/$K/task/*/status"
YS=$(for p in $(cat $CG/hadoop-yarn/*/cgroup.procs); do printf '/proc/%s/task/*/status ' $p; done)
state_sums > /root/sums-before
history_before=$(ls /var/lib/isolate/history | wc -l)
before=$(systemctl show -P MainPID isolate.service)
rm -f /root/stop-sampling /root/samples
sampler >> /root/samples &
sp=$!
sleep 2
echo "mark dpkg-start $EPOCHREALTIME" >> /root/samples
t0=$(date +%s)
dpkg -i /root/isolate_0.1.1_amd64.deb > /root/dpkg-upgrade.log 2>&1; echo "rc=$?"
echo "mark dpkg-end $EPOCHREALTIME" >> /root/samples
waitfor '[ "$(systemctl is-active isolate.service)" = active ]'
after=$(systemctl show -P MainPID isolate.service)
# Adopted: the new agent's audit finds the host converged.
waitfor 'isolate check'
echo "mark adopted $EPOCHREALTIME" >> /root/samples
sleep 3
touch /root/stop-sampling; wait $sp
echo "pid-before=$before pid-after=$after"
echo "exe=$(readlink /proc/$after/exe)"
echo "active=$(systemctl is-active isolate.service)"
dpkg -s isolate | grep -E '^(Status|Version):'
isolate check > /dev/null; echo "check=$?"
state_sums > /root/sums-after
diff /root/sums-before /root/sums-after > /dev/null && echo "state=unchanged" || { echo "state=changed"; diff /root/sums-before /root/sums-after; }
ls -1 /var/lib/isolate
echo "history=$history_before $(ls /var/lib/isolate/history | wc -l)"
grep -o '"state": "[a-z-]*"' /var/lib/isolate/journal.json | head -1
echo "rollbacks=$(journalctl -u isolate.service --since "@$t0" -o cat --no-pager | grep -c -e 'rollback started' -e 'rolling back')"
sed 's/^/dpkg: /' /root/dpkg-upgrade.log
endsec upgrade
sec samples; cat /root/samples; endsec samples
playbook run3 "-e isolate_mode=apply-once -e isolate_deb_src=/root/isolate_0.1.1_amd64.deb"
sec once
echo "agent=$(systemctl is-enabled isolate.service) $(systemctl is-active isolate.service)"
echo "timer=$(systemctl is-enabled isolate-check.timer) $(systemctl is-active isolate-check.timer)"
isolate check >/dev/null; echo "check=$?"
endsec once
sec status; systemctl status --no-pager -l isolate.service | head -20; journalctl -u isolate.service --no-pager -n 20 | cut -c1-300; endsec status
# Removal rolls back (prerm); purge then removes the state, now that nothing is left to undo.
sec remove
dpkg -r isolate > /root/dpkg-remove.log 2>&1; echo "rc=$?"
sed 's/^/dpkg: /' /root/dpkg-remove.log
[ -e /usr/bin/isolate ] || echo "no isolate"
echo "kafka-allowed=[$(systemctl show -P AllowedCPUs kafka.service)]"
ls -1 /var/lib/isolate
grep -o '"state": "[a-z-]*"' /var/lib/isolate/journal.json | head -1
endsec remove
threads removed
sec purge
dpkg --purge isolate > /root/dpkg-purge.log 2>&1; echo "rc=$?"
sed 's/^/dpkg: /' /root/dpkg-purge.log
test -e /var/lib/isolate && echo "state-dir=kept" || echo "state-dir=gone"
test -e /etc/isolate/policy.yaml && echo "policy=kept" || echo "policy=gone"
endsec purge
# isolate_state: absent, on a host where isolate runs again: the package installed by hand, the
# policy the purge kept applied, the agent started (with the metrics drop-in the role left).
sec reinstall
dpkg -i /root/isolate_0.1.1_amd64.deb > /root/dpkg-reinstall.log 2>&1; echo "rc=$?"
isolate apply --yes > /dev/null 2>&1; echo "apply=$?"
systemctl enable --now isolate.service 2>&1; echo "agent=$(systemctl is-active isolate.service)"
waitfor 'isolate check && test -s /var/lib/prometheus/node-exporter/isolate.prom'
endsec reinstall
threads refenced
playbook absent "-e isolate_state=absent"
sec gone
echo "agent=$(systemctl is-active isolate.service) $(systemctl is-enabled isolate.service 2>&1)"
echo "timer=$(systemctl is-active isolate-check.timer)"
dpkg -s isolate > /dev/null 2>&1 && echo "package=installed" || echo "package=gone"
[ -e /usr/bin/isolate ] || echo "no isolate"
test -e /var/lib/isolate && echo "state-dir=kept" || echo "state-dir=gone"
test -e /etc/isolate/policy.yaml && echo "policy=kept" || echo "policy=gone"
test -e /var/lib/prometheus/node-exporter/isolate.prom && echo "textfile=kept" || echo "textfile=gone"
test -e /etc/systemd/system/isolate.service.d/50-isolate-metrics.conf && echo "dropin=kept" || echo "dropin=gone"
echo "kafka-allowed=[$(systemctl show -P AllowedCPUs kafka.service)]"
endsec gone
threads absent-threads
settings restored
`;

/** Kafka's and YARN's threads of a section (threads() in the script). */
const tasks = (text: string) => parseState(text).tasks;

/**
 * The check-mode run as docs/ansible.md shows it: the copy module's temporary file named in its diff
 * header is random, trailing blanks and runs of blank lines go.
 */
function checkDiffSample(text: string): string {
  return text
    .replace(/ansible-local-\w+\/tmp\w+/g, 'ansible-local-XXXXXXXX/tmpXXXXXXXX')
    .replace(/[ \t]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** `changed=N failed=M` of the localhost line of PLAY RECAP. */
function recap(text: string): { ok: number; changed: number; failed: number } {
  const m = /^localhost\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=\d+\s+failed=(\d+)/m.exec(text);
  if (!m) throw new Error(`no PLAY RECAP line for localhost:\n${text.slice(-3000)}`);
  return { ok: Number(m[1]), changed: Number(m[2]), failed: Number(m[3]) };
}

/**
 * Version N+1 of a .deb: the same build, its control file's Version raised (what an upgrade is to
 * dpkg: the old package's prerm upgrade, the new one's postinst configure with the old version).
 */
async function nextVersion(deb: string, version: string, to: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'isolate-next-'));
  await execa('dpkg-deb', ['-R', deb, dir]);
  const control = join(dir, 'DEBIAN/control');
  const text = readFileSync(control, 'utf8');
  if (!/^Version: /m.test(text)) throw new Error(`${deb}: no Version in its control file`);
  writeFileSync(control, text.replace(/^Version: .*$/m, `Version: ${version}`));
  await execa('dpkg-deb', ['--root-owner-group', '-Zgzip', '-z1', '--build', dir, to]);
}

/** One /proc sample of the upgrade: when, and each thread's allowed CPUs by whose thread it is. */
interface Sample {
  n: number;
  at: number;
  threads: { who: string; cpus: CpuSet; count: number }[];
}

/** The `s N TIME WHO=CPUS:COUNT ...` and `mark NAME TIME` lines of the sampler. */
function parseSamples(text: string): { samples: Sample[]; marks: Map<string, number> } {
  const samples: Sample[] = [];
  const marks = new Map<string, number>();
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[0] === 'mark' && f.length === 3) marks.set(f[1]!, Number(f[2]));
    if (f[0] !== 's' || f.length < 3) continue;
    const threads = f.slice(3).map((x) => {
      const m = /^(kafka|yarn)=([0-9,-]+):(\d+)$/.exec(x);
      if (!m) throw new Error(`unreadable sample field ${x} in: ${line}`);
      return { who: m[1]!, cpus: CpuSet.parse(m[2]!), count: Number(m[3]) };
    });
    samples.push({ n: Number(f[1]), at: Number(f[2]), threads });
  }
  return { samples, marks };
}

/** What is wrong with one sample: a YARN thread allowed on Kafka's CPUs, a Kafka thread off them. */
function violations(threads: Sample['threads'], kafka: CpuSet): string[] {
  const out: string[] = [];
  for (const t of threads) {
    if (t.who === 'yarn' && t.cpus.overlaps(kafka)) out.push(`${t.count} yarn thread(s) on ${t.cpus}`);
    if (t.who === 'kafka' && t.cpus.toString() !== kafka.toString())
      out.push(`${t.count} kafka thread(s) on ${t.cpus}, not ${kafka}`);
  }
  return out;
}

/** Every file of the role, keyed by its path in the guest. */
function roleFiles(): Record<string, string> {
  const dir = join(REPO_ROOT, 'ansible/roles/isolate');
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[`/root/ansible/roles/isolate/${relative(dir, p)}`] = readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  return out;
}

// Part of `npm test` (ISOLATE_VM_ROLE=0 skips it): 255 s with the ansible-core rootfs cached, 297-379 s
// in cold CI rehearsals where that rootfs is built first (before the check-mode run was added); with
// the upgrade and removal phases, 426-491 s of guest on a loaded shared machine (rootfs cached), the
// upgrade itself ~35 s of it. Its playbook runs are most of it (62-140 s each under TCG: every module is
// a Python process). With the absent phase (two more playbook runs, a dpkg -i): 771-1110 s of guest on the
// shared 2-core machine at load average 13-20 (six sessions' guests), each playbook run 92-185 s.
describe.skipIf(process.env.ISOLATE_VM_ROLE === '0')(
  'the Ansible role in the real-systemd guest, over the local connection',
  () => {
    const vm = vmScenario(
      'role-systemd',
      async () => {
        const out = mkdtempSync(join(tmpdir(), 'isolate-role-vm-'));
        // The .deb (the guest is Debian: no .rpm) and the ansible-core rootfs variant (cached after its
        // first build) in parallel.
        await Promise.all([
          execa(process.execPath, ['scripts/package.mjs', '--out', out, '--fast-deb', '--no-rpm'], {
            cwd: REPO_ROOT,
          }),
          systemdRootfs(ROLE_ROOTFS_PACKAGES),
        ]);
        await nextVersion(
          join(out, 'isolate_0.1.0_amd64.deb'),
          '0.1.1',
          join(out, 'isolate_0.1.1_amd64.deb'),
        );
        return {
          systemd: true as const,
          // More RAM than the other systemd guests: the initramfs holds Python and ansible-core too.
          layout: {
            ...LAYOUTS.twoSocketSmt2,
            name: 'twoSocketSmt2-3g',
            numa: [
              ...[
                '-object',
                'memory-backend-ram,id=m0,size=1536M',
                '-numa',
                'node,nodeid=0,cpus=0-3,memdev=m0',
              ],
              ...[
                '-object',
                'memory-backend-ram,id=m1,size=1536M',
                '-numa',
                'node,nodeid=1,cpus=4-7,memdev=m1',
              ],
            ],
            memMiB: 3072,
          },
          includeProject: false,
          rootfsPackages: ROLE_ROOTFS_PACKAGES,
          script: SCRIPT,
          // Sleeping stand-ins: spinning ones would take the host CPU that TCG needs for ansible-playbook.
          standins: { kafkaAtBoot: true, kafkaThreads: 6, kafkaBusy: false },
          files: {
            ...roleFiles(),
            '/root/ansible/site.yml': PLAYBOOK,
            '/root/ansible/ansible.cfg': '[defaults]\nroles_path = roles\nretry_files_enabled = false\n',
            '/root/isolate_0.1.0_amd64.deb': readFileSync(join(out, 'isolate_0.1.0_amd64.deb')),
            '/root/isolate_0.1.1_amd64.deb': readFileSync(join(out, 'isolate_0.1.1_amd64.deb')),
            '/root/proc-sampler.sh': readFileSync(join(REPO_ROOT, 'test/vm/support/proc-sampler.sh'), 'utf8'),
            // Each task's module imports module_utils compiled, not from the payload's zip (the file says why).
            [`${DIST_PACKAGES}/ansible_module_utils_pyc.py`]: readFileSync(
              join(REPO_ROOT, 'test/vm/support/ansible_module_utils_pyc.py'),
              'utf8',
            ),
            [`${DIST_PACKAGES}/isolate-test-ansible-pyc.pth`]: 'import ansible_module_utils_pyc\n',
          },
          // A deadline for a hang only: beside a second guest on a loaded machine it ran past 25 minutes.
          timeoutMs: 2_400_000,
        };
      },
      3_600_000,
    );
    const { s } = vm;

    it('the guest starts without isolate, Kafka running unfenced', () => {
      expect(s('before')).toContain('no isolate');
      expect(s('before')).toContain('kafka=active');
      const k = tasks(s('unfenced')).filter((t) => t.who === 'kafka');
      expect(k.length, s('unfenced')).toBeGreaterThanOrEqual(7);
      expect(k[0]!.cpus.toString()).toBe('0-7');
    });

    it('check mode before the install plans with the unpacked .deb and changes nothing', () => {
      expect(s('check0'), s('check0')).toMatch(/^rc=0$/m);
      expect(recap(s('check0')).failed, s('check0')).toBe(0);
      expect(s('check0')).toMatch(/TASK \[isolate : Unpack the package\][^\n]*\nok:/);
      // The plan of this host, from the package's isolate: Kafka's unit gets CPUs through systemd.
      expect(s('check0')).toMatch(/^\+\S+ \S*kafka\.service AllowedCPUs = \d/m);
      expect(s('check0')).toMatch(/TASK \[isolate : Enable and start isolate.service\][^\n]*\nskipping:/);
      expect(s('staged')).toContain('no isolate');
      expect(s('staged')).toContain('no staging directory');
      expect(s('staged')).toContain('no policy');
      expect(s('staged')).not.toMatch(/^unit=enabled/m);
      // What the install would change: a version, not a copy of the package ("diff skipped").
      expect(s('check0')).toMatch(
        /TASK \[isolate : Say which version the install changes\][^\n]*\nchanged: \[localhost\] => \{\n\s+"msg": "isolate \(not installed\) → 0\.1\.0: the install would change the host"/,
      );
      expect(s('check0')).toMatch(/TASK \[isolate : Copy the package\][^\n]*\nskipping:/);
      expect(s('check0')).not.toMatch(/diff skipped/);
    });

    it("docs/ansible.md's check-mode sample is this host's real run: systemd's properties", () => {
      const out = s('check0');
      const from = out.indexOf('TASK [isolate : Say which version the install changes]');
      const to = out.indexOf('PLAY RECAP');
      expect(from, out).toBeGreaterThan(0);
      expect(to).toBeGreaterThan(from);
      expectDocSample('docs/ansible.md', 'check-diff', checkDiffSample(out.slice(from, to)));
    });

    it('the first run installs the .deb, writes the policy and starts the agent', () => {
      expect(s('run1'), s('run1')).toMatch(/^rc=0$/m);
      const first = recap(s('run1'));
      expect(first.failed).toBe(0);
      expect(first.changed, s('run1')).toBeGreaterThanOrEqual(3);
      expect(s('run1')).toMatch(/TASK \[isolate : Install the package\][^\n]*\n(changed|ok)/);
      // Started once: the agent did not run before the play, so the restart handler leaves it alone.
      expect(s('run1')).toMatch(/RUNNING HANDLER \[isolate : Restart isolate\][^\n]*\nskipping:/);
      expect(s('service'), s('status')).toMatch(/^starts=1$/m);
      expect(s('service')).toMatch(/^loads=1$/m);
      expect(s('service')).toMatch(
        /^exec=argv\[\]=\/usr\/bin\/isolate agent --metrics-textfile \/var\/lib\/prometheus\/node-exporter\/isolate\.prom $/m,
      );
      expect(s('service'), s('status')).toMatch(/^active=active$/m);
      expect(s('service')).toMatch(/^enabled=enabled$/m);
      // Agent mode: the agent audits the host itself, so the role stops the 5-minute audit timer
      // (the task runs against real systemd, not skipped).
      expect(s('run1')).toMatch(/TASK \[isolate : Stop the audit timer \(the agent audits\)\][^\n]*\nok:/);
      expect(s('service')).toMatch(/^timer=disabled inactive$/m);
      expect(s('service')).toMatch(/^Status: install ok installed$/m);
      expect(s('service')).toMatch(/^Version: 0\.1\.0$/m);
      expect(s('policy')).toMatch(/systemdUnit: kafka\.service/);
    });

    it('the agent converges the host: Kafka on one whole core of one node, YARN off it, check OK', () => {
      expect(s('converge'), s('status')).toMatch(/waited=\d+/);
      expect(held(s('converge'))).toBe(true);
      const siblings = new Map<number, { core: string; node: string }>();
      for (const m of s('siblings').matchAll(/^cpu(\d+) (\S+) (\d+)$/gm))
        siblings.set(Number(m[1]), { core: m[2]!, node: m[3]! });
      expect(siblings.size).toBe(8);
      const all = tasks(s('fenced'));
      const k = all.filter((t) => t.who === 'kafka');
      const y = all.filter((t) => t.who === 'yarn');
      expect(k.length, s('fenced')).toBeGreaterThanOrEqual(7);
      expect(y.length, s('fenced')).toBeGreaterThanOrEqual(4);
      const kafka = k[0]!.cpus;
      for (const t of k) expect(t.cpus.toString(), `kafka tid ${t.tid}`).toBe(kafka.toString());
      // One whole core: exactly the SMT siblings of one CPU, on one node, as the guest kernel reports them.
      const first = siblings.get(kafka.toArray()[0]!)!;
      expect(kafka.toString()).toBe(CpuSet.parse(first.core).toString());
      expect(kafka.size).toBe(2);
      expect(new Set(kafka.toArray().map((c) => siblings.get(c)!.node)).size).toBe(1);
      for (const t of y) expect(t.cpus.overlaps(kafka), `yarn tid ${t.tid} ${t.cpus}`).toBe(false);
      expect(s('check'), s('check')).toMatch(/^rc=0$/m);
    });

    it('the agent serves its metrics on 127.0.0.1:9464', () => {
      expect(s('metrics')).toMatch(/^isolate_policy_valid 1$/m);
      expect(s('metrics')).toMatch(/^isolate_exclusive_cpus\{workload="kafka"\} 2$/m);
    });

    it("isolate_metrics: both — the agent also writes node_exporter's textfile, 0644", () => {
      expect(held(s('textfile')), s('textfile')).toBe(true);
      expect(s('textfile')).toMatch(/^mode=644$/m);
      expect(s('textfile')).toMatch(/^isolate_policy_valid 1$/m);
      expect(s('textfile')).toMatch(/^isolate_exclusive_cpus\{workload="kafka"\} 2$/m);
    });

    it('drift corrected by the agent leaves a journal, a baseline and an assignment to upgrade with', () => {
      expect(held(s('drift')), s('drift')).toBe(true);
      expect(s('drift')).toMatch(/^baseline\.json$/m);
      expect(s('drift')).toMatch(/^journal\.json$/m);
      expect(s('drift')).toMatch(/^assignment\.json$/m);
      expect(held(s('converged2')), s('converged2')).toBe(true);
    });

    it('N+1 over N while the agent runs: not one /proc sample shows Kafka unfenced', () => {
      expect(s('upgrade'), s('upgrade')).toMatch(/^rc=0$/m);
      const kafka = tasks(s('fenced')).find((t) => t.who === 'kafka')!.cpus;
      const { samples, marks } = parseSamples(s('samples'));
      const start = marks.get('dpkg-start')!;
      const end = marks.get('dpkg-end')!;
      const adopted = marks.get('adopted')!;
      expect([start, end, adopted].every(Number.isFinite), s('samples').slice(0, 2000)).toBe(true);
      // Sampled before dpkg started, all through it, and on after the new agent took over.
      expect(samples.filter((x) => x.at < start).length).toBeGreaterThanOrEqual(3);
      const during = samples.filter((x) => x.at >= start && x.at <= adopted);
      expect(during.length).toBeGreaterThanOrEqual(10);
      expect(samples.filter((x) => x.at > adopted).length).toBeGreaterThanOrEqual(3);
      expect(samples.at(-1)!.at).toBeGreaterThan(adopted);
      // Each sample saw every thread: Kafka's and YARN's (a sample that read nothing proves nothing).
      const kafkaThreads = tasks(s('fenced')).filter((t) => t.who === 'kafka').length;
      for (const x of samples) {
        const count = (who: string) =>
          x.threads.filter((t) => t.who === who).reduce((n, t) => n + t.count, 0);
        expect(count('kafka'), `sample ${x.n}`).toBe(kafkaThreads);
        expect(count('yarn'), `sample ${x.n}`).toBeGreaterThanOrEqual(4);
      }
      // The judge sees a violation where there is one: the threads before isolate ran.
      const unfenced = tasks(s('unfenced')).map((t) => ({ who: t.who, cpus: t.cpus, count: 1 }));
      expect(violations(unfenced, kafka).length).toBeGreaterThan(0);
      const bad = samples.flatMap((x) => violations(x.threads, kafka).map((v) => `sample ${x.n}: ${v}`));
      expect(bad).toEqual([]);
      const gaps = samples.slice(1).map((x, i) => x.at - samples[i]!.at);
      const median = [...gaps].sort((a, b) => a - b)[gaps.length >> 1]!;
      // Due every 100 ms; under TCG a starved guest (dpkg unpacking 100 MiB) delays some. How dense the
      // samples were is printed below, not compared with a budget: the counts above are what the
      // proof needs (samples before, all through and after the upgrade).
      process.stderr.write(
        `role-systemd upgrade: ${samples.length} samples (${during.length} from dpkg -i until the new agent's check passed, ${(adopted - start).toFixed(1)} s; dpkg ${(end - start).toFixed(1)} s), median interval ${(median * 1000).toFixed(0)} ms, longest ${(Math.max(...gaps) * 1000).toFixed(0)} ms, violations ${bad.length}\n`,
      );
    });

    it("the new agent runs the new executable and adopts the old one's state: nothing rolled back or rewritten", () => {
      const m = /pid-before=(\d+) pid-after=(\d+)/.exec(s('upgrade'));
      expect(m, s('upgrade')).not.toBeNull();
      expect(Number(m![1])).toBeGreaterThan(0);
      expect(Number(m![2])).toBeGreaterThan(0);
      expect(m![2]).not.toBe(m![1]);
      expect(s('upgrade')).toMatch(/^exe=\/usr\/bin\/isolate$/m);
      expect(s('upgrade')).toMatch(/^active=active$/m);
      expect(s('upgrade')).toMatch(/^Version: 0\.1\.1$/m);
      expect(s('upgrade')).toMatch(/^check=0$/m);
      // Policy, journal, baseline and assignment byte for byte as N left them; no new journal.
      expect(s('upgrade'), s('upgrade')).toMatch(/^state=unchanged$/m);
      for (const f of ['journal.json', 'baseline.json', 'assignment.json'])
        expect(s('upgrade')).toMatch(new RegExp(`^${f.replace('.', '\\.')}$`, 'm'));
      const h = /^history=(\d+) (\d+)$/m.exec(s('upgrade'));
      expect(h?.[2], s('upgrade')).toBe(h?.[1]);
      expect(s('upgrade')).toMatch(/^"state": "applied"$/m);
      expect(s('upgrade')).toMatch(/^rollbacks=0$/m);
    });

    it('moved to apply-once, the role stops the agent and runs the audit timer instead', () => {
      expect(s('run3'), s('run3')).toMatch(/^rc=0$/m);
      expect(recap(s('run3')).failed, s('run3')).toBe(0);
      expect(s('run3')).toMatch(
        /TASK \[isolate : Stop the agent \(this host applies once\)\][^\n]*\nchanged:/,
      );
      expect(s('once'), s('run3')).toMatch(/^agent=disabled inactive$/m);
      expect(s('once')).toMatch(/^timer=enabled active$/m);
      // The host stays converged without the agent.
      expect(s('once')).toMatch(/^check=0$/m);
    });

    it('removing the package rolls the host back; Kafka and YARN get every CPU again', () => {
      expect(s('remove'), s('remove')).toMatch(/^rc=0$/m);
      expect(s('remove')).toContain('no isolate');
      expect(s('remove')).toMatch(/^kafka-allowed=\[\]$/m);
      expect(s('remove')).toMatch(/^"state": "rolled-back"$/m);
      expect(s('remove')).not.toMatch(/^baseline\.json$/m);
      expect(s('remove')).not.toMatch(/rollback on removal failed/);
      const all = tasks(s('removed'));
      expect(all.filter((t) => t.who === 'kafka').length, s('removed')).toBeGreaterThanOrEqual(7);
      for (const t of all) expect(t.cpus.toString(), `${t.who} tid ${t.tid}`).toBe('0-7');
    });

    it('purge after that rollback removes /var/lib/isolate and leaves the policy', () => {
      expect(s('purge'), s('purge')).toMatch(/^rc=0$/m);
      expect(s('purge')).toMatch(/^state-dir=gone$/m);
      expect(s('purge')).toMatch(/^policy=kept$/m);
    });

    // isolate_state: absent in check mode (what it lists, that it changes nothing) is
    // test/ansible/absent.test.ts's: check mode never reaches systemd, so a guest proves nothing more.
    it('isolate reinstalled by hand, applied and started: the host absent will take it off', () => {
      expect(s('reinstall'), s('reinstall')).toMatch(/^rc=0$/m);
      expect(s('reinstall')).toMatch(/^apply=0$/m);
      expect(s('reinstall')).toMatch(/^agent=active$/m);
      expect(held(s('reinstall')), s('reinstall')).toBe(true);
    });

    it('isolate_state: absent rolls back, stops the agent, purges the package and its state', () => {
      expect(s('absent'), s('absent')).toMatch(/^rc=0$/m);
      expect(recap(s('absent')).failed, s('absent')).toBe(0);
      expect(s('absent')).toMatch(
        /TASK \[isolate : Stop and disable the agent and the audit timer\][^\n]*\nchanged:/,
      );
      expect(s('absent')).toMatch(/TASK \[isolate : Roll back every change isolate made\][^\n]*\nchanged:/);
      expect(s('absent')).toMatch(
        /TASK \[isolate : Stop on a rollback that did not complete\][^\n]*\nskipping:/,
      );
      expect(s('absent')).toMatch(
        /TASK \[isolate : Remove the package and its state directory \(purge\)\][^\n]*\nchanged:/,
      );
      // The purge comes after the rollback succeeded.
      expect(s('absent').indexOf('Roll back every change')).toBeLessThan(s('absent').indexOf('(purge)'));
      const gone = s('gone');
      expect(gone, gone).toMatch(/^agent=inactive /m);
      expect(gone).toMatch(/^timer=inactive$/m);
      expect(gone).toMatch(/^package=gone$/m);
      expect(gone).toContain('no isolate');
      expect(gone).toMatch(/^state-dir=gone$/m);
      expect(gone).toMatch(/^policy=kept$/m);
      expect(gone).toMatch(/^textfile=gone$/m);
      expect(gone).toMatch(/^dropin=gone$/m);
      expect(gone).toMatch(/^kafka-allowed=\[\]$/m);
      const fenced = tasks(s('refenced'));
      expect(
        fenced.some((t) => t.cpus.toString() !== '0-7'),
        s('refenced'),
      ).toBe(true);
      const all = tasks(s('absent-threads'));
      expect(all.filter((t) => t.who === 'kafka').length, s('absent-threads')).toBeGreaterThanOrEqual(7);
      for (const t of all) expect(t.cpus.toString(), `${t.who} tid ${t.tid}`).toBe('0-7');
    });

    it("after absent, Kafka's unit properties and every cgroup setting are as before isolate", () => {
      const read = (name: string) =>
        new Map(
          s(name)
            .split('\n')
            .map((l) => l.trim())
            .filter((l) => l.includes('='))
            .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const),
        );
      const before = read('pristine');
      const after = read('restored');
      expect(before.size, s('pristine')).toBeGreaterThan(20);
      for (const k of ['kafka.service:AllowedCPUs', './cgroup.subtree_control'])
        expect(before.has(k), k).toBe(true);
      // Cgroups of units that came and went (a timer's service) are not isolate's: compare what both have.
      const common = [...before.keys()].filter((k) => after.has(k));
      expect(common.length).toBeGreaterThan(before.size * 0.8);
      const differ = common
        .filter((k) => before.get(k) !== after.get(k))
        .map((k) => `${k}: ${before.get(k)} → ${after.get(k)}`);
      expect(differ).toEqual([]);
      // Nothing isolate made is left: no cgroup with a CPU list that was not there before.
      const made = [...after.keys()].filter(
        (k) => !before.has(k) && /cpuset\.cpus$/.test(k) && after.get(k) !== '',
      );
      expect(made).toEqual([]);
    });

    it('a second run changes nothing and leaves the agent and the policy as they were', () => {
      expect(s('run2'), s('run2')).toMatch(/^rc=0$/m);
      expect(recap(s('run2')), s('run2')).toMatchObject({ changed: 0, failed: 0 });
      expect(s('run2')).not.toMatch(/RUNNING HANDLER/);
      expect(s('after')).toMatch(/^active=active$/m);
      const sha = (t: string) => /policy-sha=(\w+)/.exec(t)?.[1];
      expect(sha(s('after'))).toBe(sha(s('service')));
      process.stderr.write(
        `role-systemd: guest ${(vm.wallMs / 1000).toFixed(0)} s; playbook runs: check mode ${/seconds=(\d+)/.exec(s('check0'))?.[1]} s, first ${/seconds=(\d+)/.exec(s('run1'))?.[1]} s, second ${/seconds=(\d+)/.exec(s('run2'))?.[1]} s, apply-once ${/seconds=(\d+)/.exec(s('run3'))?.[1]} s\n`,
      );
    });
  },
);
