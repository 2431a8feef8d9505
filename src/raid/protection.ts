// Shared machinery of the per-tool protection-unit truth tables (src/raid/<tool>/protection.ts):
// every state word and fault flag is looked up in the tool's table; a word the table does not know
// makes the unit `unknown` (never healthy) and is kept so `raid check` can quote it.
import type { Protection, ProtectionCondition } from '../model/raid.js';

/** Lower-cased vendor word → meaning. */
export type WordTable = Readonly<Record<string, ProtectionCondition>>;

/** Worst first: the unit's condition is the worst meaning found. */
const ORDER: ProtectionCondition[] = [
  'absent',
  'failed',
  'replace',
  'degraded',
  'unknown',
  'charging',
  'learning',
  'healthy',
];

function worst(conditions: ProtectionCondition[]): ProtectionCondition {
  let best = ORDER.length - 1;
  for (const c of conditions) best = Math.min(best, ORDER.indexOf(c));
  return conditions.length === 0 ? 'unknown' : (ORDER[best] as ProtectionCondition);
}

/** Collects the meaning of each word a unit printed. */
export class Judgement {
  private readonly conditions: ProtectionCondition[] = [];
  readonly faults: string[] = [];
  readonly unrecognised: string[] = [];

  /** Judge `label: value` with `table`; a missing value (not printed) says nothing. */
  word(label: string, value: string | null | undefined, table: WordTable): ProtectionCondition | null {
    if (value === null || value === undefined) return null;
    const meaning = table[value.trim().toLowerCase()];
    if (meaning === undefined) {
      this.unrecognised.push(`${label}: ${value.trim()}`);
      this.conditions.push('unknown');
      return 'unknown';
    }
    this.add(meaning, `${label}: ${value.trim()}`);
    return meaning;
  }

  /** A meaning decided by a rule rather than a word list (a number below a limit). */
  add(meaning: ProtectionCondition, said: string): void {
    this.conditions.push(meaning);
    if (meaning !== 'healthy') this.faults.push(said);
  }

  /** Something needed was not printed: unknown, but there is no word to quote. */
  unknownWithoutWord(): void {
    this.conditions.push('unknown');
  }

  condition(): ProtectionCondition {
    return worst(this.conditions);
  }

  /** Fill the judged fields of `p`. `healthy` is true only for `healthy`, null only for `unknown`. */
  apply(p: Protection): Protection {
    p.condition = this.condition();
    p.faults = [...this.faults];
    p.unrecognised = [...this.unrecognised];
    p.healthy = healthyOf(p.condition);
    if (p.condition === 'absent') p.present = false;
    // A charge or learn under another fault still is one: the plan waits for it either way.
    if (this.conditions.includes('charging')) p.charging = true;
    if (this.conditions.includes('learning')) p.learnActive = true;
    return p;
  }
}

export function healthyOf(c: ProtectionCondition): boolean | null {
  return c === 'healthy' ? true : c === 'unknown' ? null : false;
}

/** A Yes/No fault flag: `No` is healthy, `Yes` means `yes`. */
export function flag(yes: ProtectionCondition): WordTable {
  return { no: 'healthy', yes };
}
