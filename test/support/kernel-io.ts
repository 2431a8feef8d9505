// The kernel's rules for one write(2) to a per-device io file (block/blk-iolatency.c, blk-iocost.c,
// bfq-cgroup.c, blk-throttle.c in 6.1), for fixture trees of plain files, which would otherwise keep
// only the last line written. Reads back as the kernel prints: "default N" first, one line per device.
import { readFileSync } from 'node:fs';
import { CgroupFsExecutor } from '../../src/cgroup/cgroupfs.js';
import type { Change } from '../../src/model/plan.js';

/** The kernel's per-device io file semantics for one write; null: not an io file. */
export function kernelIoWrite(file: string, text: string, written: string): string | null {
  const name = file.split('/').at(-1)!;
  if (!['io.latency', 'io.weight', 'io.bfq.weight', 'io.max'].includes(name)) return null;
  const lines = text.split('\n').filter(Boolean);
  const [dev, ...rest] = written.trim().split(/\s+/);
  if (dev === undefined) throw Object.assign(new Error('EINVAL'), { code: 'EINVAL' });
  const others = lines.filter((l) => l.split(' ')[0] !== dev);
  const own = lines.find((l) => l.split(' ')[0] === dev);
  let line: string | null;
  if (name === 'io.latency') {
    const t = rest[0]?.replace(/^target=/, '');
    line = t === 'max' || t === '0' ? null : `${dev} target=${t}`;
  } else if (name === 'io.max') {
    const keys = new Map(
      (own ?? `${dev} rbps=max wbps=max riops=max wiops=max`)
        .split(' ')
        .slice(1)
        .map((w) => w.split('=') as [string, string]),
    );
    for (const w of rest) keys.set(...(w.split('=') as [string, string]));
    const all = ['rbps', 'wbps', 'riops', 'wiops'].map((k) => `${k}=${keys.get(k) ?? 'max'}`);
    line = all.every((w) => w.endsWith('=max')) ? null : `${dev} ${all.join(' ')}`;
  } else if (dev === 'default') {
    return [`default ${rest[0]}`, ...others.filter((l) => !l.startsWith('default '))].join('\n');
  } else {
    line = rest[0] === 'default' ? null : `${dev} ${rest[0]}`;
  }
  const devs = [...others.filter((l) => !l.startsWith('default ')), ...(line ? [line] : [])].sort();
  const head = others.filter((l) => l.startsWith('default '));
  return [...head, ...devs].join('\n');
}

/** The real cgroupfs executor; its single write goes through the kernel's io rules. */
export class KernelIo extends CgroupFsExecutor {
  override async write(file: string, value: string, change: Change, what: string): Promise<void> {
    const merged = kernelIoWrite(file, readFileSync(file, 'utf8'), value);
    return super.write(file, merged === null ? value : merged === '' ? '' : `${merged}\n`, change, what);
  }
}
