// Pressure stall information of a cgroup (`cpu.pressure`, `memory.pressure`, `io.pressure`): the
// share of time its tasks were stalled waiting for the resource. "Is Kafka still being starved?"
import path from 'node:path';
import { cgroupDir, readTrimSync } from './fsutil.js';

export type PsiResource = 'cpu' | 'memory' | 'io';
export const PSI_RESOURCES: readonly PsiResource[] = ['cpu', 'memory', 'io'];

export interface PsiLine {
  avg10: number;
  avg60: number;
  avg300: number;
  /** Total stall time in microseconds since the cgroup was created. */
  total: number;
}

export interface Psi {
  some: PsiLine | null;
  full: PsiLine | null;
}

/** Parse a `*.pressure` file; unknown or malformed lines are left out (null), never guessed. */
export function parsePsi(text: string): Psi {
  const out: Psi = { some: null, full: null };
  for (const line of text.split('\n')) {
    const m =
      /^(some|full) avg10=(\d+(?:\.\d+)?) avg60=(\d+(?:\.\d+)?) avg300=(\d+(?:\.\d+)?) total=(\d+)\s*$/.exec(
        line.trim(),
      );
    if (!m) continue;
    out[m[1] as 'some' | 'full'] = {
      avg10: Number(m[2]),
      avg60: Number(m[3]),
      avg300: Number(m[4]),
      total: Number(m[5]),
    };
  }
  return out;
}

/** A cgroup's pressure per resource; a resource whose file is missing (PSI off, no controller) is absent. */
export function readPsi(root: string, cgPath: string): Partial<Record<PsiResource, Psi>> {
  const out: Partial<Record<PsiResource, Psi>> = {};
  for (const r of PSI_RESOURCES) {
    // Synchronous, through the shared kernel-file reader: the agent reads these every round.
    const text = readTrimSync(path.join(cgroupDir(root, cgPath), `${r}.pressure`));
    if (text !== null) out[r] = parsePsi(text);
  }
  return out;
}
