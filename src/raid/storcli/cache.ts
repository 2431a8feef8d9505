// Decoding of storcli's per-VD cache words.
import type { IoPolicy, ReadAhead, WritePolicy } from '../../model/raid.js';

export interface CacheWords {
  write: WritePolicy;
  readAhead: ReadAhead | null;
  ioPolicy: IoPolicy | null;
}

const UNKNOWN: CacheWords = { write: 'unknown', readAhead: null, ioPolicy: null };

/**
 * storcli ≤7.x VD LIST `Cache`: `[NR|R][AWB|WB|WT][C|D]` — legend printed by storcli itself
 * ("R=Read Ahead Always|NR=No Read Ahead|WB=WriteBack|AWB=Always WriteBack|WT=WriteThrough|C=Cached IO|
 * D=Direct IO", storcli-check-text-3ctrl-cv-bbu-nobbu.txt); decoded the same way by libstoragemgmt and
 * pystorcli2 (raid-cli.md §2). Anything else is unknown as a whole: a half-decoded string is a guess.
 */
export function decodeCacheString(value: unknown): CacheWords {
  if (typeof value !== 'string') return UNKNOWN;
  const m = /^(NR|R)(AWB|WB|WT)(C|D)$/.exec(value.trim());
  if (!m) return UNKNOWN;
  return {
    readAhead: m[1] === 'R' ? 'on' : 'off',
    write: m[2] === 'AWB' ? 'always-write-back' : m[2] === 'WB' ? 'write-back' : 'write-through',
    ioPolicy: m[3] === 'C' ? 'cached' : 'direct',
  };
}

/**
 * storcli2/perccli2 `CurrentCache`/`DefaultCache`: comma-separated words, e.g. `NR,WB`
 * (perccli2-status-H965i-vall.json, raid-cli.md §3.6). No I/O policy word is printed there.
 */
export function decodeCacheList(value: unknown): CacheWords {
  if (typeof value !== 'string') return UNKNOWN;
  const words = value.split(',').map((w) => w.trim());
  let write: WritePolicy = 'unknown';
  let readAhead: ReadAhead | null = null;
  let ioPolicy: IoPolicy | null = null;
  for (const w of words) {
    if (w === 'WB') write = 'write-back';
    else if (w === 'WT') write = 'write-through';
    else if (w === 'AWB') write = 'always-write-back';
    else if (w === 'R' || w === 'RA') readAhead = 'on';
    else if (w === 'NR' || w === 'NoRA') readAhead = 'off';
    else if (w === 'C') ioPolicy = 'cached';
    else if (w === 'D') ioPolicy = 'direct';
    else return UNKNOWN;
  }
  return { write, readAhead, ioPolicy };
}

/** `Write Cache(initial setting)`: `WriteBack` / `WriteThrough` (vall_show_all fixtures). */
export function decodeInitialWrite(value: unknown): WritePolicy {
  if (value === 'WriteBack') return 'write-back';
  if (value === 'WriteThrough') return 'write-through';
  if (value === 'AlwaysWriteBack') return 'always-write-back';
  return 'unknown';
}
