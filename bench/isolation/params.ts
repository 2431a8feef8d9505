import { parseArgs } from 'node:util';

export const ARM_NAMES = ['alone', 'unisolated', 'isolated', 'strict'] as const;
export type ArmName = (typeof ARM_NAMES)[number];

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
  arms: ArmName[];
  outDir: string;
}

export const USAGE = `usage: npm run bench:isolation -- (--guest [--accel auto|kvm|tcg] | --host-cgroup-root /sys/fs/cgroup)
       [--rate N] [--warmup S] [--duration S] [--cores N] [--probe-opts="--handlers 8 ..."] [--batch-threads N]
       [--arms alone,unisolated,isolated,strict] [--out DIR]`;

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
  const arms = (values.arms ?? ARM_NAMES.join(',')).split(',').map((a) => a.trim());
  for (const a of arms)
    if (!(ARM_NAMES as readonly string[]).includes(a))
      throw new Error(`--arms: unknown arm ${a} (${ARM_NAMES.join(', ')})`);
  if (!arms.includes('alone')) throw new Error('--arms: "alone" is the baseline every ratio needs');
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
    arms: ARM_NAMES.filter((a) => arms.includes(a)),
    outDir: values.out ?? defaultOut,
  };
}

function num(name: string, raw: string | undefined, def: number, min: number, max: number): number {
  if (raw === undefined) return def;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < min || v > max)
    throw new Error(`--${name}: a number from ${min} to ${max}, not ${raw}`);
  return v;
}

/** The probe options end up in a shell command line: allow only option words and numbers. */
function checkOpts(s: string): string {
  if (!/^[\w\s.-]*$/.test(s)) throw new Error(`--probe-opts: only options and numbers, not ${s}`);
  return s.trim();
}
