// A cgroup's I/O counters per device, as the kernel keeps them: cgroup v2 `io.stat` ("8:16 rbytes=…
// wbytes=… rios=… wios=… dbytes=… dios=…", hierarchical), cgroup v1 blkio's
// `blkio.throttle.io_service_bytes` / `io_serviced` ("8:16 Read N" … "Total N"). Untrusted input: a
// file that does not read as the kernel writes it is unknown (null with the reason), never zeros.
import path from 'node:path';
import { ReadRefused, readBoundedIfPresent } from '../sys/read.js';

/** Cumulative counters of one device since the cgroup was created. */
export interface IoCounters {
  rbytes: number;
  wbytes: number;
  rios: number;
  wios: number;
}

/** MAJ:MIN → counters. A device the kernel does not list has done no I/O in this cgroup (zeros). */
export type IoStat = Map<string, IoCounters>;

/** The outcome of reading one cgroup's counters: the table, or why there is none. */
export type IoStatRead = { stat: IoStat } | { stat: null; problem: string };

/** One line per device and a few dozen keys with io.latency and iocost: far below this on any host. */
const MAX_BYTES = { maxBytes: 1024 * 1024 };
const DEV = /^\d+:\d+$/;
const COUNT = /^\d+$/;

/** Parse cgroup v2 `io.stat`; a string names the first line that does not read as the kernel writes it. */
export function parseIoStat(text: string): IoStat | string {
  const out: IoStat = new Map();
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '') continue;
    const [dev, ...fields] = line.split(/\s+/);
    if (!DEV.test(dev!))
      return `line ${i + 1}: expected MAJ:MIN first, got ${JSON.stringify(dev!.slice(0, 20))}`;
    const kv = new Map<string, string>();
    for (const f of fields) {
      const eq = f.indexOf('=');
      if (eq <= 0) return `line ${i + 1}: expected key=value fields, got ${JSON.stringify(f.slice(0, 20))}`;
      kv.set(f.slice(0, eq), f.slice(eq + 1));
    }
    const c: Partial<IoCounters> = {};
    for (const key of ['rbytes', 'wbytes', 'rios', 'wios'] as const) {
      const v = kv.get(key);
      // Counters are u64: above 2^53 a number is no longer exact, and is not taken as one.
      if (v === undefined || !COUNT.test(v) || !Number.isSafeInteger(Number(v)))
        return `line ${i + 1} (${dev}): ${key} is ${v === undefined ? 'missing' : `not a count (${JSON.stringify(v.slice(0, 24))})`}`;
      c[key] = Number(v);
    }
    if (out.has(dev!)) return `line ${i + 1}: ${dev} listed twice`;
    out.set(dev!, c as IoCounters);
  }
  return out;
}

/**
 * Parse v1 `blkio.throttle.io_service_bytes` (or `io_serviced`) into per-device read and write
 * totals: the Read and Write rows of each device (Sync, Async, Discard and Total are other cuts of
 * the same I/O); the closing "Total N" line has no device.
 */
export function parseBlkioThrottle(text: string): Map<string, { read: number; write: number }> | string {
  const out = new Map<string, { read: number; write: number }>();
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '') continue;
    const parts = line.split(/\s+/);
    if (parts[0] === 'Total' && parts.length === 2 && COUNT.test(parts[1]!)) continue;
    const [dev, op, n] = parts;
    if (parts.length !== 3 || !DEV.test(dev!) || !COUNT.test(n!) || !Number.isSafeInteger(Number(n)))
      return `line ${i + 1}: expected "MAJ:MIN Operation count", got ${JSON.stringify(line.slice(0, 40))}`;
    if (!['Read', 'Write', 'Sync', 'Async', 'Discard', 'Total'].includes(op!))
      return `line ${i + 1}: unknown operation ${JSON.stringify(op!.slice(0, 20))}`;
    const row = out.get(dev!) ?? { read: 0, write: 0 };
    if (op === 'Read') row.read = Number(n);
    if (op === 'Write') row.write = Number(n);
    out.set(dev!, row);
  }
  return out;
}

function readFile(file: string): { text: string | null } | { problem: string } {
  try {
    return { text: readBoundedIfPresent(file, MAX_BYTES) };
  } catch (err) {
    return { problem: err instanceof ReadRefused ? `${err.code} (${err.reason})` : (err as Error).message };
  }
}

/** cgroup v2: the cgroup directory's `io.stat` (absent when the io controller is not enabled for it). */
export function readIoStat(dir: string, shown: string): IoStatRead {
  const r = readFile(path.join(dir, 'io.stat'));
  if ('problem' in r) return { stat: null, problem: `${shown}/io.stat: ${r.problem}` };
  if (r.text === null) {
    return {
      stat: null,
      problem: `${shown}/io.stat does not exist (the io controller is not enabled for this cgroup, or it does not exist)`,
    };
  }
  const stat = parseIoStat(r.text);
  return typeof stat === 'string' ? { stat: null, problem: `${shown}/io.stat: ${stat}` } : { stat };
}

/**
 * cgroup v1: blkio's throttle counters of the cgroup directory. The `_recursive` files count the
 * cgroup's descendants too (YARN's containers are children of /hadoop-yarn); kernels before 4.13
 * only have the cgroup's own, which is then said.
 */
export function readBlkioStat(dir: string, shown: string): IoStatRead & { note?: string } {
  const read = (suffix: string) => {
    const bytes = readFile(path.join(dir, `blkio.throttle.io_service_bytes${suffix}`));
    const ios = readFile(path.join(dir, `blkio.throttle.io_serviced${suffix}`));
    return { bytes, ios };
  };
  let files = read('_recursive');
  let note: string | undefined;
  let suffix = '_recursive';
  if ('text' in files.bytes && files.bytes.text === null) {
    files = read('');
    suffix = '';
    note = `${shown}: this kernel has no blkio.throttle.*_recursive files, so only the I/O of processes in the cgroup itself (not its children) is counted`;
  }
  const name = (f: string) => `${shown}/blkio.throttle.${f}${suffix}`;
  const texts: string[] = [];
  for (const [f, r] of [
    ['io_service_bytes', files.bytes],
    ['io_serviced', files.ios],
  ] as const) {
    if ('problem' in r) return { stat: null, problem: `${name(f)}: ${r.problem}` };
    if (r.text === null)
      return { stat: null, problem: `${name(f)} does not exist (no blkio hierarchy holds this cgroup)` };
    texts.push(r.text);
  }
  const bytes = parseBlkioThrottle(texts[0]!);
  if (typeof bytes === 'string') return { stat: null, problem: `${name('io_service_bytes')}: ${bytes}` };
  const ios = parseBlkioThrottle(texts[1]!);
  if (typeof ios === 'string') return { stat: null, problem: `${name('io_serviced')}: ${ios}` };
  const stat: IoStat = new Map();
  for (const dev of new Set([...bytes.keys(), ...ios.keys()])) {
    const b = bytes.get(dev) ?? { read: 0, write: 0 };
    const n = ios.get(dev) ?? { read: 0, write: 0 };
    stat.set(dev, { rbytes: b.read, wbytes: b.write, rios: n.read, wios: n.write });
  }
  return note ? { stat, note } : { stat };
}
