// A host's files in memory, as the engine sees them through an executor: per-device io files and
// properties hold one line per device (a write replaces its device's line, as the kernel and systemd
// do), a process or thread is in one cgroup per hierarchy, every other setting is one value. The
// model knows nothing of isolate's journal keys: it names what a change touches from the change's
// fields as the host would (the device is the first word of the line, the PID/TID is `to`).
import type { ChangeExecutor } from '../../src/apply/executor.js';
import type { Change } from '../../src/model/plan.js';

/** Settings whose value is one device's line. */
const PER_DEVICE = /^(io\.(max|latency|weight|bfq\.weight)|blkio\..*_device|IO(Device|Read|Write).*)$/;
const isMove = (c: Change) => c.setting === 'cgroup.procs' || c.setting === 'tasks';
const hierarchy = (c: Change) => (c.backend === 'cgroupfs' ? (c.hierarchy ?? '') : '');
const deviceOf = (line: string) => line.trim().split(/\s+/)[0] ?? '';

export class ModelHost implements ChangeExecutor {
  /** A file (or property) of a target: its lines by device, or its one value under ''. */
  readonly files = new Map<string, Map<string, string>>();
  /** Where each task is: `hierarchy|kind|id` → cgroup. */
  readonly tasks = new Map<string, string>();

  private file(c: Change): Map<string, string> {
    const k = `${c.backend}|${hierarchy(c)}|${c.target}|${c.setting}`;
    let f = this.files.get(k);
    if (!f) {
      f = new Map();
      this.files.set(k, f);
    }
    return f;
  }
  private task(c: Change): string {
    return `${hierarchy(c)}|${c.setting}|${c.to}`;
  }

  async read(c: Change): Promise<string | null> {
    if (isMove(c)) return this.tasks.get(this.task(c)) ?? null;
    if (PER_DEVICE.test(c.setting)) {
      const dev = deviceOf(c.to);
      return this.file(c).get(dev) ?? `${dev} none`;
    }
    return this.file(c).get('') ?? null;
  }
  satisfied(c: Change, live: string | null): boolean {
    return live === (isMove(c) ? c.target : c.to);
  }
  same(_c: Change, a: string | null, b: string | null): boolean {
    return a === b;
  }
  async apply(c: Change): Promise<Record<string, never>> {
    this.set(c, isMove(c) ? c.target : c.to);
    return {};
  }
  async undo(c: Change, previous: string | null): Promise<Record<string, never>> {
    this.set(c, previous);
    return {};
  }

  /** Put `value` where `c` writes (null or a "none" line: nothing there). */
  set(c: Change, value: string | null): void {
    if (isMove(c)) {
      if (value === null) return; // a task that was nowhere known is left where it is
      this.tasks.set(this.task(c), value);
      return;
    }
    const f = this.file(c);
    const key = PER_DEVICE.test(c.setting) ? deviceOf(c.to) : '';
    if (value === null || (key !== '' && value === `${key} none`)) f.delete(key);
    else f.set(key, value);
  }

  /** Everything, in a fixed order: two hosts with the same bytes give the same text. */
  bytes(): string {
    const files = [...this.files]
      .filter(([, f]) => f.size > 0)
      .map(([k, f]) => `${k}:\n${[...f.values()].sort().join('\n')}`)
      .sort();
    const tasks = [...this.tasks].map(([k, v]) => `${k} in ${v}`).sort();
    return [...files, ...tasks].join('\n');
  }

  clone(): ModelHost {
    const m = new ModelHost();
    for (const [k, f] of this.files) m.files.set(k, new Map(f));
    for (const [k, v] of this.tasks) m.tasks.set(k, v);
    return m;
  }
}
