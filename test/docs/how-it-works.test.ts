// docs/how-it-works.md: the before/after diagram is drawn here from what the program prints for a
// captured two-socket host (`isolate topology --json`, `isolate plan --dry-run --json`), and the
// systemd plan is the planner's own output for that topology on a host where systemd owns the slices.
import { describe, expect, it } from 'vitest';
import type { ObservedState } from '../../src/model/observed.js';
import { formatPlan } from '../../src/planner/format.js';
import { planHost } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/load.js';
import { readTopology } from '../../src/topology/read.js';
import { docText, expectDocSample, sampleIds } from '../support/doc-samples.js';
import { freshHost } from '../support/observed.js';
import { cli, hostWithPolicy, normalise } from './host.js';

const DOC = 'docs/how-it-works.md';
const FIXTURE = 'intel-2s-ht-split';
const GROUPS = ['init.scope', 'system.slice', 'user.slice', 'kafka.slice', 'hadoop-yarn'];
// The policy shown in the doc, above the diagram.
const POLICY = /<!-- policy: diagram -->\n```yaml\n([\s\S]*?)```/.exec(docText(DOC))?.[1] ?? '';
const checked = new Set<string>();
function sample(id: string, text: string): void {
  checked.add(id);
  expectDocSample(DOC, id, text);
}

interface TopoJson {
  cpus: { id: number; package: number; node: number; core: number; siblings: number[] }[];
  nodes: { id: number; memoryBytes: number }[];
  cores: { id: number; node: number; package: number; cpus: number[] }[];
  online: number[];
}
interface PlanJson {
  allocation: Record<string, { class: string; target: string; cpus: number[]; cpuList: string }>;
  reserved: { cpus: number[]; cpuList: string };
  changes: { target: string; setting: string; from: string | null; to: string; workload?: string }[];
}

function parseList(list: string): number[] {
  if (list.trim() === '') return [];
  return list.split(',').flatMap((r) => {
    const [a, b] = r.split('-').map(Number);
    return Array.from({ length: (b ?? a!) - a! + 1 }, (_, i) => a! + i);
  });
}

/** packages → nodes → cores → SMT siblings, and who may run on each core before and after. */
function diagram(t: TopoJson, p: PlanJson): string {
  const all = t.online;
  // Each cgroup the plan sets cpuset.cpus on: its CPUs before ("" inherits the parent's: all) and after.
  const groups = p.changes
    .filter((c) => c.setting === 'cpuset.cpus')
    .map((c) => {
      const name = c.workload ?? c.target.slice(1);
      return {
        name,
        target: c.target,
        before: c.from === null || c.from === '' ? all : parseList(c.from),
        after: parseList(c.to),
        exclusive: p.allocation[name]?.class === 'exclusive',
      };
    });
  const partitions = new Set(
    p.changes.filter((c) => c.setting === 'cpuset.cpus.partition' && c.to === 'root').map((c) => c.target),
  );
  const who = (cpus: number[], when: 'before' | 'after') => {
    const names = groups.filter((g) => cpus.every((c) => g[when].includes(c))).map((g) => g.name);
    if (when === 'before' && names.length === groups.length) return 'every cgroup';
    const ex = groups.find((g) => g.exclusive && names.includes(g.name));
    if (ex) return `${ex.name} only${partitions.has(ex.target) ? ' (partition root)' : ''}`;
    return names.join(', ');
  };
  const gib = (b: number) => `${(b / 1024 ** 3).toFixed(1)} GiB`;
  const lines: string[] = [];
  const pad = (s: string, n: number) => s.padEnd(n);
  lines.push(`${pad('', 30)}${pad('before', 16)}after`);
  for (const pkg of [...new Set(t.cores.map((c) => c.package))]) {
    lines.push(`package ${pkg}`);
    for (const node of t.nodes.filter((n) => t.cores.some((c) => c.node === n.id && c.package === pkg))) {
      lines.push(`└─ node ${node.id}  memory ${gib(node.memoryBytes)}`);
      const cores = t.cores.filter((c) => c.node === node.id && c.package === pkg);
      cores.forEach((core, i) => {
        const branch = i === cores.length - 1 ? '└─' : '├─';
        const sib = core.cpus.map((c) => `cpu ${String(c).padStart(2)}`).join(' + ');
        const reserved = core.cpus.every((c) => p.reserved.cpus.includes(c)) ? ' [reserved]' : '';
        lines.push(
          `   ${branch} ${pad(`core ${core.id}`, 8)}${pad(sib, 17)}${pad(who(core.cpus, 'before'), 16)}${who(core.cpus, 'after')}${reserved}`,
        );
      });
    }
  }
  lines.push('');
  lines.push(`${pad('cgroup', 16)}${pad('cpuset.cpus before', 28)}after`);
  for (const g of groups) {
    const from = p.changes.find((c) => c.target === g.target && c.setting === 'cpuset.cpus')!.from;
    const before =
      from === '' || from === null
        ? `"" (inherits ${all.length === 0 ? '' : `${all[0]}-${all.at(-1)}`})`
        : from;
    const part = partitions.has(g.target) ? '  + cpuset.cpus.partition root' : '';
    lines.push(
      `${pad(g.target, 16)}${pad(before, 28)}${p.changes.find((c) => c.target === g.target && c.setting === 'cpuset.cpus')!.to}${part}`,
    );
  }
  return lines.join('\n');
}

describe('docs/how-it-works.md', () => {
  it('the isolation diagram is drawn from topology and plan of a captured host', () => {
    expect(POLICY).toMatch(/class: exclusive/);
    const root = hostWithPolicy(FIXTURE, POLICY, GROUPS);
    const topo = cli(root, ['topology']);
    expect(topo.code).toBe(0);
    sample('topology', normalise(`$ isolate topology\n${topo.stdout}`, root));
    const t = JSON.parse(cli(root, ['topology', '--json']).stdout) as TopoJson;
    const p = JSON.parse(cli(root, ['plan', '--dry-run', '--json']).stdout) as PlanJson;
    // The picture must say what the plan says: each exclusive core's siblings all go to its workload.
    for (const [name, a] of Object.entries(p.allocation).filter(([, a]) => a.class === 'exclusive')) {
      for (const c of t.cores.filter((c) => c.cpus.some((x) => a.cpus.includes(x))))
        expect(
          c.cpus.every((x) => a.cpus.includes(x)),
          `${name}: core ${c.id} split`,
        ).toBe(true);
    }
    sample('diagram', diagram(t, p));
    const plan = cli(root, ['plan', '--dry-run']);
    sample('plan', normalise(`$ isolate plan --dry-run\n${plan.stdout}`, root));
  });

  it('on a systemd host the slices are fenced through set-property, the rest through cgroupfs', () => {
    const root = hostWithPolicy(FIXTURE, POLICY, GROUPS);
    const topology = readTopology(root);
    // What isolate observes on such a host: the top-level cgroups with the kernel's defaults, and
    // systemd's units for the slices and the scope (properties unset).
    const o: ObservedState = freshHost(GROUPS);
    o.cgroup.rootSubtreeControl = ['cpuset', 'cpu', 'io', 'memory', 'pids'];
    for (const g of GROUPS) {
      o.cgroup.groups[`/${g}`]!.values = {
        'cpuset.cpus': '',
        'cpuset.mems': '',
        'cpuset.cpus.partition': 'member',
        'cpu.idle': '0',
        'cpu.weight': '100',
        'memory.low': '0',
        'memory.high': 'max',
        'memory.max': 'max',
        'cgroup.subtree_control': '',
      };
    }
    const units = GROUPS.filter((g) => g.endsWith('.slice') || g.endsWith('.scope'));
    o.systemd = {
      version: 252,
      units: Object.fromEntries(
        units.map((u) => [
          u,
          {
            Id: u,
            LoadState: 'loaded',
            AllowedCPUs: '',
            AllowedMemoryNodes: '',
            MemoryMin: '0',
            MemoryLow: '0',
            MemoryHigh: 'infinity',
            MemoryMax: 'infinity',
            CPUWeight: '[not set]',
          },
        ]),
      ),
    };
    for (const u of units) o.cgroup.units[u] = `/${u}`;
    const plan = planHost(topology, parsePolicy(POLICY, '/etc/isolate/policy.yaml'), o);
    expect(plan.changes.some((c) => c.backend === 'systemd')).toBe(true);
    sample('systemd-plan', formatPlan(plan, '/etc/isolate/policy.yaml'));
  });

  it('every sample in the doc is produced by this file', () => {
    expect(sampleIds(DOC).filter((i) => !checked.has(i))).toEqual([]);
  });
});
