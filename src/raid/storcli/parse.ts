// storcli/perccli (and storcli2/perccli2) output → model. One accumulator takes any number of
// outputs (`/cALL show all J`, `/cN/vall show all J`, `/cN/bbu|cv show all J`, `show J`, text
// `show all`) and merges them per controller, so `raid parse` can read a support bundle and
// `observe` can combine its calls.
// The parts: facts.ts (what is gathered), read-data.ts (Response Data → facts), to-model.ts (facts → model).
import type { Finding, ParsedOutput } from '../../model/raid.js';
import { getOrCreate, text } from '../words.js';
import { type CtlFacts, type Json, newCtlFacts } from './facts.js';
import { readData } from './read-data.js';
import { storcliTextToJson } from './text.js';
import { toController } from './to-model.js';

export class StorcliReader {
  private readonly ctls = new Map<string, CtlFacts>();
  private readonly hostFindings: Finding[] = [];
  private noController = false;

  constructor(private readonly tool: 'storcli' | 'perccli') {}

  /**
   * Add one saved or live output. Bad output adds an `unknown` finding and nothing else. `exitCode`
   * is a live call's exit status: a non-zero exit with a `Success` verdict is a contradiction, so
   * what the output says about its controllers becomes unknown.
   */
  add(output: string, source = 'output', exitCode: number | null = null): void {
    let doc: unknown;
    const trimmed = output.trim();
    if (trimmed === '') {
      this.hostFindings.push({ severity: 'unknown', message: `${this.tool}: ${source} is empty` });
      return;
    }
    if (trimmed.startsWith('{')) {
      try {
        doc = JSON.parse(trimmed);
      } catch {
        this.hostFindings.push({
          severity: 'unknown',
          message: `${this.tool}: ${source} is not valid JSON (truncated?); its controllers are unknown`,
        });
        return;
      }
    } else {
      doc = storcliTextToJson(output);
    }
    const list = (doc as Json | null)?.Controllers;
    if (!Array.isArray(list) || list.length === 0) {
      this.hostFindings.push({
        severity: 'unknown',
        message: `${this.tool}: ${source} has no "Controllers" list; not ${this.tool} output`,
      });
      return;
    }
    for (const entry of list) {
      this.addEntry(entry as Json, source);
      const status = ((entry as Json)['Command Status'] ?? {}) as Json;
      const ctl = text(status.Controller);
      if (exitCode !== null && exitCode !== 0 && status.Status === 'Success' && ctl !== null) {
        this.facts(ctl).incomplete ??=
          `${this.tool}: ${source} exited with status ${exitCode} after printing Success`;
      }
    }
  }

  private addEntry(entry: Json, source: string): void {
    const status = (entry['Command Status'] ?? {}) as Json;
    const data = entry['Response Data'] as Json | undefined;
    const ok = status.Status === 'Success';
    const description = text(status.Description);
    const details = Array.isArray(status['Detailed Status']) ? (status['Detailed Status'] as Json[]) : [];
    const ctlId = text(status.Controller);
    if (!ok && /no controller found/i.test(description ?? '')) {
      this.noController = true;
      return;
    }
    if (data && typeof data === 'object') {
      const overview = data['System Overview'];
      if (Array.isArray(overview)) this.readOverview(overview as Json[]);
      if ('Controller Count' in data && ctlId === null) return;
    }
    if (ctlId === null) {
      if (!ok)
        this.hostFindings.push({
          severity: 'unknown',
          message: `${this.tool}: ${source}: ${failureText(description, details)}`,
        });
      return;
    }
    const useCv = details.some((d) => /use \/cx\/cv/i.test(String(d.ErrMsg ?? '')));
    if (!data || typeof data !== 'object') {
      // A set/delete verdict or a refused show: no data about the controller itself.
      if (useCv) this.facts(ctlId).bbuPathRefused = true;
      else if (!ok) {
        this.hostFindings.push({
          severity: 'warning',
          message: `${this.tool} /c${ctlId}: ${failureText(description, details)}`,
        });
      }
      return;
    }
    const ctl = this.facts(ctlId);
    // On a CacheVault card `/cx/bbu show all` fails with "use /cx/cv": not "no battery" (§3.3).
    if (useCv) ctl.bbuPathRefused = true;
    // `Failure` can still carry full Response Data (ErrCd 59 fixture, raid-cli.md §3.5): keep the data.
    else if (!ok) ctl.failures.push(failureText(description, details));
    readData(ctl, data);
  }

  private facts(ctl: string): CtlFacts {
    return getOrCreate(this.ctls, ctl, () => newCtlFacts(ctl));
  }

  private readOverview(rows: Json[]): void {
    for (const row of rows) {
      const ctl = text(row.Ctl);
      if (ctl === null) continue;
      const f = this.facts(ctl);
      f.model ??= text(row.Model);
      // Raw on purpose: "N/A" is the answer here (no BBU), not a missing value.
      f.overviewBbu = typeof row.BBU === 'string' ? row.BBU.trim() : null;
      f.overviewHealth = text(row.Hlth);
    }
  }

  result(): ParsedOutput {
    const findings = [...this.hostFindings];
    if (this.noController && this.ctls.size === 0) {
      findings.push({ severity: 'info', message: `${this.tool}: No Controller found` });
    }
    const controllers = [...this.ctls.values()]
      .sort((a, b) => Number(a.ctl) - Number(b.ctl))
      .map((f) => toController(f, this.tool));
    return { controllers, findings };
  }
}

function failureText(description: string | null, details: Json[]): string {
  const msgs = details.map(
    (d) => `${text(d.ErrMsg) ?? 'error'}${d.ErrCd !== undefined ? ` (ErrCd ${d.ErrCd})` : ''}`,
  );
  const desc = description && description !== 'None' ? description : 'command failed';
  return msgs.length > 0 ? `${desc}: ${msgs.join('; ')}` : desc;
}

/** Parse any number of storcli/perccli outputs into one result. */
export function parseStorcli(
  outputs: { text: string; source?: string }[],
  tool: 'storcli' | 'perccli',
): ParsedOutput {
  const reader = new StorcliReader(tool);
  for (const o of outputs) reader.add(o.text, o.source);
  return reader.result();
}
