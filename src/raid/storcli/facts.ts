// What storcli/perccli outputs say about one controller and its virtual drives, gathered from
// any number of outputs before anything is judged: the facts the parser fills and the mapper reads.

import type { CacheWords } from './cache.js';

export type Json = Record<string, unknown>;

export interface VdFacts {
  vd: string;
  dg: string | null;
  type: string | null;
  state: string | null;
  name: string | null;
  current: CacheWords | null;
  defaults: CacheWords | null;
  initialWrite: string | null;
  diskCachePolicy: string | null;
  activeOps: string | null;
  /** `OS Drive Name` from `/cN/vall show all` (VDn Properties / VD Properties). */
  osDriveName: string | null;
}

export interface CtlFacts {
  ctl: string;
  schema2: boolean;
  model: string | null;
  status: string | null;
  personality: string | null;
  driver: string | null;
  onBoardMemory: string | null;
  /** HwCfg `BBU` / `Energy Pack`: Present | Absent. */
  packHw: string | null;
  /** Status `BBU Status` / `Energy Pack Status`: bitfield number or NA. */
  packStatus: unknown;
  nextBatteryLearn: string | null;
  protKind: 'bbu' | 'cachevault' | null;
  /** Protection properties by normalised name (state, replacement required, learn cycle active ...). */
  prot: Map<string, string>;
  /** `use /cx/cv`: the card has a CacheVault, not a BBU (megaraid-dashboard-bbu_show_all-failure-use-cv.json). */
  bbuPathRefused: boolean;
  /** The unit's own `/cN/bbu|cv show all` was read: only it prints the firmware fault flags. */
  detailRead: boolean;
  /** A read of this controller was not complete (exit status, no Command Status): unknown. */
  incomplete: string | null;
  overviewBbu: string | null;
  overviewHealth: string | null;
  vds: Map<string, VdFacts>;
  pdcByDg: Map<string, string>;
  failures: string[];
}

/** A controller nothing is known of yet. */
export function newCtlFacts(ctl: string): CtlFacts {
  return {
    ctl,
    schema2: false,
    model: null,
    status: null,
    personality: null,
    driver: null,
    onBoardMemory: null,
    packHw: null,
    packStatus: undefined,
    nextBatteryLearn: null,
    protKind: null,
    prot: new Map(),
    bbuPathRefused: false,
    detailRead: false,
    incomplete: null,
    overviewBbu: null,
    overviewHealth: null,
    vds: new Map(),
    pdcByDg: new Map(),
    failures: [],
  };
}

/** A virtual drive nothing is known of yet. */
export function newVdFacts(vd: string): VdFacts {
  return {
    vd,
    dg: null,
    type: null,
    state: null,
    name: null,
    current: null,
    defaults: null,
    initialWrite: null,
    diskCachePolicy: null,
    activeOps: null,
    osDriveName: null,
  };
}

/** A JSON object, or null for anything else (arrays included). */
export function obj(value: unknown): Json | null {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null;
}
