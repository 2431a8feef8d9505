// Types of bench/damon.mjs, for the tests that import it.
export declare const DAMON_ADMIN: string;

export interface Kdamond {
  stateFile: string;
  state: string;
  description: string;
  /** [start, end) physical address ranges its `paddr` contexts sample. */
  physical: Array<[number, number]>;
}
export declare function kdamonds(admin?: string): Kdamond[];
export declare function describeDamon(admin?: string): string;
export declare function residentInRanges(
  pid: number | string,
  ranges: Array<[number, number]>,
): { resident: number; inside: number };
export declare function spans(
  found: number,
  paused: number,
  count: number,
  log: string,
  admin?: string,
): Promise<void>;

export interface Sample {
  t: number;
  /** Clock ticks (user + system) by process name. */
  cpu: Record<string, number>;
}
export declare function parseSamples(text: string): Sample[];

export interface Switch {
  t: number;
  state: string;
}
export declare function parseSwitches(text: string): Switch[];

export interface Span {
  state: string;
  from: number;
  to: number;
  /** % of one core by process name; null where a process was not sampled throughout. */
  cpu: Record<string, number | null>;
  windows: Record<string, { min: number; max: number; n: number } | null>;
}
export declare function spanReport(
  samples: Sample[],
  switches: Switch[],
  options?: { settleS?: number; windowS?: number },
): { names: string[]; spans: Span[] };
