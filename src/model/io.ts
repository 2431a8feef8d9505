// What decides whether a cgroup io setting can act on a disk, observed before any is written:
// `io.weight` does something only under the BFQ scheduler or with iocost enabled for the device on
// the root (`io.cost.qos`); `io.latency` works under any scheduler, on a kernel built with it
// (CONFIG_BLK_CGROUP_IOLATENCY: Debian's cloud kernel is not); all need the io controller.

export interface IoFacts {
  /**
   * The io controller: listed in the cgroup2 root's `cgroup.controllers` (`available`) or not
   * (`missing`); `v1`: the host runs cgroup v1 for its controllers (blkio); `unknown`: unreadable.
   */
  controller: 'available' | 'missing' | 'v1' | 'unknown';
  /** The file that said so, for the note (`/sys/fs/cgroup/cgroup.controllers`). */
  controllersFile: string;
  /**
   * iocost on the root: MAJ:MIN of devices with `enable=1` in `io.cost.qos`; `unsupported`: the kernel
   * has no io.cost.qos (built without iocost); `unknown`: the file could not be read or parsed.
   */
  iocost: { enabled: string[] } | 'unsupported' | 'unknown';
  /** The io.cost.qos file, for the note. */
  iocostFile: string;
  /**
   * Whether this kernel has io.latency: `present` / `absent` as a cgroup with io enabled, or the
   * kernel's config, shows it; `unknown` when neither says. Optional: facts from before it was observed.
   */
  latency?: IoLatencySupport;
}

/** io.latency in this kernel, and what showed it (a file or a config line, for the notes). */
export interface IoLatencySupport {
  state: 'present' | 'absent' | 'unknown';
  /** "/sys/fs/cgroup/system.slice has io.stat but no io.latency", "# CONFIG_… is not set in /boot/config-6.1.0". */
  evidence: string;
}

/** The kernel option io.latency is built with. */
export const IOLATENCY_OPTION = 'CONFIG_BLK_CGROUP_IOLATENCY';

// Per-device io values. A change to a per-device file or property carries one device's value, in the
// form that is both written and read back, so the journal holds what rollback writes:
// - cgroupfs `io.latency` "8:16 target=25000" (µs); no line reads as "8:16 target=max", which clears it;
// - `io.weight` / `io.bfq.weight` "8:16 1000"; no line: "8:16 default", which clears it;
// - `io.max` "8:16 wbps=83886080" (only the keys isolate sets; the kernel reads back all four, `max`
//   for none); no line: "8:16 rbps=max wbps=max riops=max wiops=max", which clears it;
// - v1 blkio files "8:16 500"; no line: "8:16 0" (throttle: no limit) or "8:16 default" (BFQ weight);
// - systemd properties "/dev/block/8:16 25ms" (systemctl show's entry for that device); none: "".

/** The cgroup v2 files isolate writes one device's line of. */
export const IO_FILES = ['io.latency', 'io.weight', 'io.bfq.weight', 'io.max'] as const;
export type IoFile = (typeof IO_FILES)[number];

/** cgroup v1 blkio files isolate writes one device's line of (no latency: v1 has none). */
export const BLKIO_FILES = [
  'blkio.bfq.weight_device',
  'blkio.throttle.read_bps_device',
  'blkio.throttle.write_bps_device',
  'blkio.throttle.read_iops_device',
  'blkio.throttle.write_iops_device',
] as const;
export type BlkioFile = (typeof BLKIO_FILES)[number];

/** systemd's per-device io properties, and the name `systemctl show` prints each under. */
export const IO_PROPERTY_SHOWN = {
  IODeviceLatencyTargetSec: 'IODeviceLatencyTargetUSec',
  IODeviceWeight: 'IODeviceWeight',
  IOReadBandwidthMax: 'IOReadBandwidthMax',
  IOWriteBandwidthMax: 'IOWriteBandwidthMax',
  IOReadIOPSMax: 'IOReadIOPSMax',
  IOWriteIOPSMax: 'IOWriteIOPSMax',
} as const;
export type IoProperty = keyof typeof IO_PROPERTY_SHOWN;

export function isIoFile(setting: string): setting is IoFile | BlkioFile {
  return (
    (IO_FILES as readonly string[]).includes(setting) || (BLKIO_FILES as readonly string[]).includes(setting)
  );
}
export function isIoProperty(setting: string): setting is IoProperty {
  return setting in IO_PROPERTY_SHOWN;
}

/** The path isolate names a device by to systemd: stable across renames, resolved by systemd with stat(2). */
export function devicePath(dev: string): string {
  return `/dev/block/${dev}`;
}

/** The device (MAJ:MIN, or a /dev path for systemd) a per-device value names: its first word. */
export function ioDeviceOf(value: string): string {
  return value.trim().split(/\s+/)[0] ?? '';
}

/** The value that clears `dev` in a per-device file (what its absence reads as). */
export function ioClear(file: IoFile | BlkioFile, dev: string): string {
  switch (file) {
    case 'io.latency':
      return `${dev} target=max`;
    case 'io.max':
      return `${dev} rbps=max wbps=max riops=max wiops=max`;
    case 'io.weight':
    case 'io.bfq.weight':
    case 'blkio.bfq.weight_device':
      return `${dev} default`;
    default:
      return `${dev} 0`;
  }
}

/** `dev`'s line in a per-device file's text (the cleared value when it has none). */
export function ioLineOf(file: IoFile | BlkioFile, text: string, dev: string): string {
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (ioDeviceOf(t) === dev) return t.split(/\s+/).join(' ');
  }
  return ioClear(file, dev);
}

/** key=value words of a per-device line after the device ("target=max", "wbps=1"); a bare word as `''`. */
function words(value: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const w of value.trim().split(/\s+/).slice(1)) {
    const i = w.indexOf('=');
    if (i < 0) out.set('', w);
    else out.set(w.slice(0, i), w.slice(i + 1));
  }
  return out;
}

/** "max", "0" (io.latency's and v1 throttle's none) and the absence of a key all mean no limit. */
const unlimited = (v: string | undefined) => v === undefined || v === 'max' || v === '0';

/**
 * Whether `live` has what `want` asks, as the kernel reads it back: io.max compares only the keys
 * `want` names (isolate sets only the policy's caps); the others compare whole.
 */
export function ioSatisfies(file: IoFile | BlkioFile, live: string | null, want: string): boolean {
  if (live === null) return false;
  if (ioDeviceOf(live) !== ioDeviceOf(want)) return false;
  const a = words(live);
  const b = words(want);
  if (file === 'io.max' || file === 'io.latency') {
    for (const [k, v] of b) if (!(unlimited(a.get(k)) && unlimited(v)) && a.get(k) !== v) return false;
    return true;
  }
  const x = a.get('') ?? '';
  const y = b.get('') ?? '';
  if (file.startsWith('blkio.throttle')) return unlimited(x) === unlimited(y) && (unlimited(x) || x === y);
  return x === y;
}

/** Same value, for drift checks and undo: every key compared, absent keys as none. */
export function sameIoValue(file: IoFile | BlkioFile, a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  if (file === 'io.max') {
    return (
      ioDeviceOf(a) === ioDeviceOf(b) &&
      ['rbps', 'wbps', 'riops', 'wiops'].every((k) => {
        const x = words(a).get(k);
        const y = words(b).get(k);
        return unlimited(x) ? unlimited(y) : x === y;
      })
    );
  }
  return ioSatisfies(file, a, b) && ioSatisfies(file, b, a);
}

const TIMESPAN: Record<string, number> = { us: 1, ms: 1000, s: 1_000_000, min: 60_000_000, h: 3_600_000_000 };

/** systemd's timespan as `systemctl show` prints it ("25ms", "1s 500ms", "infinity") in µs. */
export function parseTimespan(text: string): number | 'infinity' | null {
  const t = text.trim();
  if (t === 'infinity') return 'infinity';
  let usec = 0;
  let seen = false;
  for (const m of t.matchAll(/(\d+(?:\.\d+)?)\s*(us|ms|min|s|h)(?=\s|\d|$)|(\S+)/g)) {
    if (m[3] !== undefined) return null;
    usec += Number(m[1]) * TIMESPAN[m[2]!]!;
    seen = true;
  }
  return seen ? Math.round(usec) : null;
}

/** µs as systemd takes a latency target: whole milliseconds when it is some. */
export function formatLatency(usec: number): string {
  return usec % 1000 === 0 ? `${usec / 1000}ms` : `${usec}us`;
}

/** UINT64_MAX: how systemctl show prints an unlimited bandwidth or IOPS entry. */
const UINT64_MAX = '18446744073709551615';

/** One entry's value, normalized: a latency in µs, a number, or `infinity`. */
function entryValue(property: IoProperty, value: string): string | null {
  const v = value.trim();
  if (property === 'IODeviceLatencyTargetSec') {
    const t = parseTimespan(v);
    return t === null ? null : String(t);
  }
  if (v === 'infinity' || v === UINT64_MAX || v === 'max') return 'infinity';
  return /^\d+$/.test(v) ? v : null;
}

/** `dev`'s entry in a property as `systemctl show` printed it (one line per entry); "" for none. */
export function ioEntryOf(shown: string | undefined, path: string): string {
  for (const line of (shown ?? '').split('\n')) {
    const t = line.trim();
    if (ioDeviceOf(t) === path) return t.split(/\s+/).join(' ');
  }
  return '';
}

/** Every entry of a property as shown, one per line. */
export function ioEntries(shown: string | undefined): string[] {
  return (shown ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

/** Same entry: the same device and value (a latency "25ms" = "25000us"; no entry = an unlimited one). */
export function sameIoEntry(property: IoProperty, a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  const norm = (e: string) => {
    if (e.trim() === '') return '';
    const [dev, ...rest] = e.trim().split(/\s+/);
    const v = entryValue(property, rest.join(' '));
    return v === 'infinity' && property !== 'IODeviceWeight' ? '' : `${dev} ${v}`;
  };
  const x = norm(a);
  const y = norm(b);
  // "" (no entry) and "DEV infinity" both mean none; an entry without a device matches only itself.
  return (
    x === y ||
    (x === '' && y === '') ||
    (x.endsWith(' infinity') && y === '') ||
    (y.endsWith(' infinity') && x === '')
  );
}
