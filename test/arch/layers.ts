// The folder layering of src/: each folder is a layer and imports only from layers below it.
// `npm test` runs test/arch/layers.test.ts over every import (static and dynamic) to keep it so.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Lower rank = lower layer. Folders of equal rank must not import each other. */
export const LAYERS: Record<string, { rank: number; job: string }> = {
  model: {
    rank: 0,
    job: 'shared vocabulary: CpuSet, topology, policy, Plan/Change, observed state, findings; pure RAID safety judgement and set commands',
  },
  sys: { rank: 1, job: 'host file primitives: bounded reads, the one safe writer, the host lock' },
  topology: { rank: 2, job: 'sysfs → Topology; data directories → their disks (read-only)' },
  policy: { rank: 2, job: 'YAML → Policy, validated (read-only)' },
  planner: { rank: 3, job: 'pure: topology + policy + observed state → allocation → Plan' },
  apply: { rank: 4, job: 'backend-neutral engine: executors, journal, lock, rollback, recovery' },
  cgroup: { rank: 5, job: 'cgroup v2 backend: observer + cgroupfs executor' },
  // Above cgroup/ (not beside it): the v1 backend reuses the v2 backend's fs helpers, layout
  // detection, errno meanings and single-write(2) helper instead of copying them.
  cgroupv1: {
    rank: 5.5,
    job: 'cgroup v1 backend: observer + executor for the v1 hierarchies (legacy, hybrid)',
  },
  systemd: { rank: 5, job: 'systemd backend: unit properties through systemctl' },
  raid: { rank: 5, job: 'RAID backend: vendor tool runner, parsers, observer + executor' },
  irq: {
    rank: 5,
    job: 'IRQ backend: /proc/irq, NIC queue steering masks, the workqueue cpumask: observer, counts, executor',
  },
  audit: { rank: 6, job: 'the host check: thread scan, IRQs, NUMA memory, findings rules' },
  ops: { rank: 7, job: 'application layer: plan/apply/rollback/check/raid with injected ports' },
  agent: { rank: 8, job: 'the reconcile loop over ops, metrics, sd_notify' },
  cli: { rank: 9, job: 'flags → one op (or the agent) → rendering' },
};

/**
 * Backends observe the host and carry out changes; deciding what to change is the planner's job.
 * The planner ranks below them, so rank alone would allow the edge: a backend must still never
 * import the planner. What both need (RAID safety judgement, set-command vocabulary) lives in model.
 */
export const BACKENDS = ['cgroup', 'cgroupv1', 'systemd', 'raid', 'irq'] as const;

export interface Edge {
  file: string;
  from: string;
  to: string;
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}

/** Top-level folder of a file under src/ (`src/cli.ts` is the CLI's entry point). */
export function layerOf(srcDir: string, file: string): string {
  const rel = path.relative(srcDir, file).split(path.sep);
  return rel.length === 1 ? rel[0]!.replace(/\.ts$/, '') : rel[0]!;
}

/** Every import between two different folders of src/. */
export function folderEdges(srcDir: string): Edge[] {
  const edges: Edge[] = [];
  for (const file of walk(srcDir)) {
    const text = readFileSync(file, 'utf8');
    const from = layerOf(srcDir, file);
    for (const m of text.matchAll(/(?:from\s+|import\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const target = path.resolve(path.dirname(file), m[1]!);
      // The package's own metadata (its version) is not a layer.
      if (path.relative(srcDir, target) === path.join('..', 'package.json')) continue;
      const to = layerOf(srcDir, target.replace(/\.js$/, '.ts'));
      if (to !== from) edges.push({ file: path.relative(srcDir, file), from, to });
    }
  }
  return edges;
}

/**
 * Edges that go up or sideways, or touch a folder with no declared layer; and edges from a backend
 * to the planner (downward, yet forbidden).
 */
export function violations(edges: Edge[]): string[] {
  const rank = (f: string) => LAYERS[f === 'cli' ? 'cli' : f]?.rank;
  const backend = (f: string) => (BACKENDS as readonly string[]).includes(f);
  return edges.flatMap((e) => {
    const a = rank(e.from);
    const b = rank(e.to);
    if (a === undefined || b === undefined || b >= a) return [`${e.file}: ${e.from} → ${e.to}`];
    if (backend(e.from) && e.to === 'planner')
      return [`${e.file}: ${e.from} → ${e.to} (a backend never imports the planner)`];
    return [];
  });
}

/** Every import between two files of src/ (static, type-only and dynamic), as file → files it imports. */
export function fileGraph(srcDir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of walk(srcDir)) {
    const text = readFileSync(file, 'utf8');
    const to: string[] = [];
    for (const m of text.matchAll(/(?:from\s+|import\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const target = path.resolve(path.dirname(file), m[1]!).replace(/\.js$/, '.ts');
      if (target.startsWith(srcDir + path.sep)) to.push(path.relative(srcDir, target));
    }
    graph.set(path.relative(srcDir, file), to);
  }
  return graph;
}

/**
 * The import circles of a file graph, each once, as `a.ts → b.ts → a.ts` (starting at its smallest
 * file name). Within a folder a circle passes the layer check yet still means two modules that
 * cannot be read, tested or moved one without the other.
 */
export function importCycles(graph: Map<string, string[]>): string[] {
  const found = new Set<string>();
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (f: string) => {
    state.set(f, 'open');
    stack.push(f);
    for (const t of graph.get(f) ?? []) {
      if (state.get(t) === 'open') {
        const loop = stack.slice(stack.indexOf(t));
        const start = loop.indexOf([...loop].sort()[0]!);
        const ring = [...loop.slice(start), ...loop.slice(0, start)];
        found.add([...ring, ring[0]].join(' → '));
      } else if (!state.has(t)) visit(t);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of [...graph.keys()].sort()) if (!state.has(f)) visit(f);
  return [...found].sort();
}
