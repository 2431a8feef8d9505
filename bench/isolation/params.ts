import { parseArgs } from 'node:util';

export const ARM_NAMES = ['alone', 'unisolated', 'isolated', 'strict'] as const;
export type ArmName = (typeof ARM_NAMES)[number];
/** The I/O bench has no strict arm: isolate's strict fences CPUs, not disks. */
export const IO_ARM_NAMES = ['alone', 'unisolated', 'isolated'] as const;
export type IoArmName = (typeof IO_ARM_NAMES)[number];
export const BENCHES = ['cpu', 'io'] as const;
export type Bench = (typeof BENCHES)[number];

/** How the isolated I/O arm caps the batch: a share of what it wrote unisolated, or fixed rates. */
export type IoCap = { kind: 'share'; percent: number } | { kind: 'fixed'; wiops?: number; wbps?: number };

export interface IoParams {
  /** A directory on the disk under test; the bench works in a subdirectory it makes and removes. */
  dir: string;
  /** Appends a second (open loop). */
  rate: number;
  appendBytes: number;
  fsyncMs: number;
  batchThreads: number;
  batchBsKiB: number;
  batchFileMiB: number;
  cap: IoCap;
  /** The probe's io.latency target (cgroup v2 only). */
  latencyTargetUs: number;
}

export interface Params {
  where: { kind: 'guest'; accel: 'auto' | 'kvm' | 'tcg' } | { kind: 'host'; cgroupRoot: string };
  /** Offered load, requests per second (open loop). */
  rate: number;
  warmupS: number;
  durationS: number;
  /** Whole cores the probe gets in the isolated arms. */
  cores: number;
  /** Extra probe options, e.g. `--handlers 8 --net 3`. */
  probeOpts: string;
  /** Batch threads; undefined: one per online CPU. */
  batchThreads: number | undefined;
  /** The CPU arms to run, in order; empty when the CPU bench is not run. */
  arms: ArmName[];
  /** The I/O arms to run, in order; empty when the I/O bench is not run. */
  ioArms: IoArmName[];
  io?: IoParams;
  /** A real host: let the strict arm move every process of the host into isolate's housekeeping cgroup. */
  hostWide: boolean;
  outDir: string;
}

export const USAGE = `usage: npm run bench:isolation -- (--guest [--accel auto|kvm|tcg] | --host-cgroup-root /sys/fs/cgroup)
       [--rate N] [--warmup S] [--duration S] [--cores N] [--probe-opts="--handlers 8 ..."] [--batch-threads N]
       [--arms alone,unisolated,isolated,strict] [--out DIR] [--benches cpu,io] [--host-wide]
       [--io-dir DIR [--io-rate N] [--io-append B] [--io-fsync-ms N] [--io-batch-threads N]
        [--io-batch-bs-kib N] [--io-batch-file-mib N] [--io-batch-cap 25%|wiops=N,wbps=N]
        [--io-latency-target-ms N]]
  --io-dir (a real host only) runs the I/O bench on the disk under DIR: a directory, never a device.
  Real-host arms default to alone,unisolated,isolated: the strict arm moves every process on the host
  into isolate's housekeeping cgroup and needs --host-wide. Without --host-wide the isolated arm also
  leaves the host's IRQs, packet steering and workqueues alone (quiet: off); isolate's state directory
  (/var/lib/isolate) is removed afterwards when the run created it.`;

/** Defaults depend on where it runs: an emulated guest manages a few hundred requests a second. */
export function parseParams(argv: string[], defaultOut: string): Params {
  const { values } = parseArgs({
    args: argv,
    options: {
      guest: { type: 'boolean' },
      accel: { type: 'string' },
      'host-cgroup-root': { type: 'string' },
      rate: { type: 'string' },
      warmup: { type: 'string' },
      duration: { type: 'string' },
      cores: { type: 'string' },
      'probe-opts': { type: 'string' },
      'batch-threads': { type: 'string' },
      arms: { type: 'string' },
      out: { type: 'string' },
      benches: { type: 'string' },
      'host-wide': { type: 'boolean' },
      'io-dir': { type: 'string' },
      'io-rate': { type: 'string' },
      'io-append': { type: 'string' },
      'io-fsync-ms': { type: 'string' },
      'io-batch-threads': { type: 'string' },
      'io-batch-bs-kib': { type: 'string' },
      'io-batch-file-mib': { type: 'string' },
      'io-batch-cap': { type: 'string' },
      'io-latency-target-ms': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const host = values['host-cgroup-root'];
  if (Boolean(values.guest) === (host !== undefined))
    throw new Error(`choose exactly one of --guest and --host-cgroup-root\n${USAGE}`);
  const accel = values.accel ?? 'auto';
  if (accel !== 'auto' && accel !== 'kvm' && accel !== 'tcg')
    throw new Error(`--accel: auto, kvm or tcg, not ${accel}`);
  if (host !== undefined && values.accel !== undefined) throw new Error('--accel applies to --guest only');
  const guest = host === undefined;
  const ioDir = values['io-dir'];
  const benches = (values.benches ?? (ioDir === undefined ? 'cpu' : 'cpu,io'))
    .split(',')
    .map((b) => b.trim());
  for (const b of benches)
    if (!(BENCHES as readonly string[]).includes(b))
      throw new Error(`--benches: unknown bench ${b} (${BENCHES.join(', ')})`);
  if (benches.includes('io') && ioDir === undefined)
    throw new Error('--benches io: name the disk under test with --io-dir DIR (a directory on it)');
  if (ioDir !== undefined && guest)
    throw new Error(
      '--io-dir: the I/O bench runs on a real host only (the harness guest has no disk of its own)',
    );
  const ioOnly = Object.keys(values).filter((k) => k.startsWith('io-') && k !== 'io-dir');
  if (ioOnly.length > 0 && ioDir === undefined) throw new Error(`--${ioOnly[0]} needs --io-dir`);
  // A real host's default leaves strict out: it is the one arm that changes cgroups not the bench's.
  const defaultArms = guest ? ARM_NAMES : ARM_NAMES.filter((a) => a !== 'strict');
  const arms = (values.arms ?? defaultArms.join(',')).split(',').map((a) => a.trim());
  for (const a of arms)
    if (!(ARM_NAMES as readonly string[]).includes(a))
      throw new Error(`--arms: unknown arm ${a} (${ARM_NAMES.join(', ')})`);
  if (!arms.includes('alone')) throw new Error('--arms: "alone" is the baseline every ratio needs');
  const cpu = benches.includes('cpu');
  if (!guest && cpu && arms.includes('strict') && !values['host-wide'])
    throw new Error(
      "--arms strict on a real host moves every process of the host into isolate's housekeeping cgroup (rollback moves them back): add --host-wide to allow that, or leave strict out",
    );
  if (values['host-wide'] && guest) throw new Error('--host-wide applies to --host-cgroup-root only');
  const ioArms = benches.includes('io') ? IO_ARM_NAMES.filter((a) => arms.includes(a)) : [];
  const io = ioDir === undefined ? undefined : ioParams(values, ioDir);
  if (io?.cap.kind === 'share' && ioArms.includes('isolated') && !ioArms.includes('unisolated'))
    throw new Error(
      `--io-batch-cap ${io.cap.percent}%: a share of what the batch wrote in the unisolated arm, which --arms leaves out; run it, or give fixed caps (--io-batch-cap wiops=N,wbps=N)`,
    );
  return {
    where: guest ? { kind: 'guest', accel } : { kind: 'host', cgroupRoot: host! },
    rate: num('rate', values.rate, guest ? 100 : 5000, 1, 1e6),
    warmupS: num('warmup', values.warmup, guest ? 2 : 5, 0, 3600),
    durationS: num('duration', values.duration, guest ? 8 : 30, 0.1, 3600),
    cores: num('cores', values.cores, guest ? 1 : 2, 1, 4096),
    probeOpts: checkOpts(values['probe-opts'] ?? ''),
    batchThreads:
      values['batch-threads'] === undefined
        ? undefined
        : num('batch-threads', values['batch-threads'], 1, 1, 4096),
    // Arms run in this order whatever the flag's order: batch starts once and keeps running.
    arms: cpu ? ARM_NAMES.filter((a) => arms.includes(a)) : [],
    ioArms,
    ...(io ? { io } : {}),
    hostWide: Boolean(values['host-wide']),
    outDir: values.out ?? defaultOut,
  };
}

function ioParams(values: Record<string, string | boolean | undefined>, dir: string): IoParams {
  const str = (k: string) => values[k] as string | undefined;
  if (!dir.startsWith('/')) throw new Error(`--io-dir: an absolute path, not ${dir}`);
  if (!/^[\w/.,+-]+$/.test(dir))
    throw new Error(`--io-dir: letters, digits and / . , + - _ only, not ${dir}`);
  return {
    dir,
    rate: num('io-rate', str('io-rate'), 1000, 1, 1e5),
    appendBytes: num('io-append', str('io-append'), 4096, 1, 1 << 20),
    fsyncMs: num('io-fsync-ms', str('io-fsync-ms'), 20, 1, 600_000),
    batchThreads: num('io-batch-threads', str('io-batch-threads'), 4, 1, 1024),
    batchBsKiB: num('io-batch-bs-kib', str('io-batch-bs-kib'), 16, 4, 16_384),
    batchFileMiB: num('io-batch-file-mib', str('io-batch-file-mib'), 256, 1, 1 << 20),
    cap: parseCap(str('io-batch-cap') ?? '25%'),
    latencyTargetUs: Math.round(
      num('io-latency-target-ms', str('io-latency-target-ms'), 10, 0.1, 10_000) * 1000,
    ),
  };
}

/** `25%` of the batch's unisolated rate, or fixed `wiops=N,wbps=N` (either or both). */
export function parseCap(raw: string): IoCap {
  const share = /^(\d+)%$/.exec(raw.trim());
  if (share) {
    const percent = Number(share[1]);
    if (percent < 1 || percent > 100)
      throw new Error(`--io-batch-cap: a whole share from 1 to 100%, not ${raw}`);
    return { kind: 'share', percent };
  }
  const cap: IoCap = { kind: 'fixed' };
  for (const part of raw.split(',')) {
    const m = /^(wiops|wbps)=(\d+)$/.exec(part.trim());
    if (!m || Number(m[2]) < 1)
      throw new Error(`--io-batch-cap: N% or wiops=N,wbps=N (whole numbers ≥ 1), not ${raw}`);
    cap[m[1] as 'wiops' | 'wbps'] = Number(m[2]);
  }
  return cap;
}

function num(name: string, raw: string | undefined, def: number, min: number, max: number): number {
  if (raw === undefined) return def;
  const v = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(v) || v < min || v > max)
    throw new Error(`--${name}: a number from ${min} to ${max}, not ${raw}`);
  return v;
}

/** The probe options end up in a shell command line: allow only option words and numbers. */
function checkOpts(s: string): string {
  if (!/^[\w\s.-]*$/.test(s)) throw new Error(`--probe-opts: only options and numbers, not ${s}`);
  return s.trim();
}
