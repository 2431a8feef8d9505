// /proc/interrupts and /proc/softirqs: one row per source, one count column per online CPU. Parsed
// strictly: a row that does not fit its header is reported, not guessed at (an offline CPU has no
// column, so a column is mapped to its CPU by the header, never by position).

/** One row: its id (`25`, `LOC`, `NET_RX`), a count per CPU id, and the text after the counts. */
export interface CountRow {
  id: string;
  counts: Map<number, number>;
  /** For numbered IRQs: chip, hardware IRQ and trigger words, then the action names. */
  rest: string;
}

export interface CountTable {
  /** CPU ids in column order, from the header (`CPU0 CPU1 CPU3`). */
  cpus: number[];
  rows: CountRow[];
  /** Rows that could not be read, each said once (`line 7: ...`). */
  problems: string[];
}

const MAX_ROWS = 200_000;

/** Parse the text of /proc/interrupts or /proc/softirqs. Throws only when the header is not a CPU header. */
export function parseCounts(text: string): CountTable {
  const lines = text.replace(/\0/g, '').split('\n');
  const header = lines[0]?.trim().split(/\s+/) ?? [];
  if (header.length === 0 || !header.every((h) => /^CPU\d{1,7}$/.test(h))) {
    throw new Error(
      `expected a header of CPU columns (CPU0 CPU1 ...), found ${JSON.stringify((lines[0] ?? '').slice(0, 60))}`,
    );
  }
  const cpus = header.map((h) => Number(h.slice(3)));
  const rows: CountRow[] = [];
  const problems: string[] = [];
  for (let i = 1; i < lines.length && rows.length < MAX_ROWS; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    const m = /^\s*([A-Za-z0-9_]+):(.*)$/.exec(line);
    if (!m) {
      problems.push(`line ${i + 1}: no "ID:" at its start`);
      continue;
    }
    const fields = m[2]!.trim().split(/\s+/);
    const counts = new Map<number, number>();
    let k = 0;
    while (k < cpus.length && k < fields.length && /^\d{1,20}$/.test(fields[k]!)) {
      counts.set(cpus[k]!, Number(fields[k]));
      k++;
    }
    // Numbered IRQs and the per-CPU rows (LOC, RES, ...) have a count per CPU; ERR and MIS one in all.
    if (k !== cpus.length && /^\d+$/.test(m[1]!)) {
      problems.push(`line ${i + 1}: IRQ ${m[1]} has ${k} counts for ${cpus.length} CPU columns`);
      continue;
    }
    // The text after the counts, with its own spacing (action names follow two spaces).
    let rest = m[2]!;
    for (let j = 0; j < k; j++) rest = rest.replace(/^\s*\d+/, '');
    rows.push({ id: m[1]!, counts, rest: rest.replace(/^\s+/, '').trimEnd() });
  }
  return { cpus, rows, problems };
}

/** A trigger word as the kernel prints it after the chip (`2-edge`, `9-fasteoi`, `Level`, `IO-APIC-edge`). */
const TRIGGER = /(^|-)(edge|level|fasteoi|eoi|simple|percpu|none)$/i;

/**
 * A numbered row's chip words and action names. The kernel prints the actions after two spaces,
 * separated by ", "; a row without a handler ends at its trigger word.
 */
export function splitActions(rest: string): { chip: string; actions: string[] } {
  const parts = rest.split(/\s{2,}/).filter(Boolean);
  if (parts.length < 2 || TRIGGER.test(parts[parts.length - 1]!))
    return { chip: parts.join(' '), actions: [] };
  const actions = parts[parts.length - 1]!.split(/,\s*/).filter(Boolean);
  return { chip: parts.slice(0, -1).join(' '), actions };
}
