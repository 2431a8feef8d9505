// This machine's DAMON (the kernel's data access monitor, /sys/kernel/mm/damon/admin): what it runs,
// and a way to pause it in alternate spans while agents are measured, because on this VM it sets the
// price of memory. A monitor sampling physical memory (`paddr`) clears the accessed bit of sampled
// pages; here (a guest with shadow-paged memory) touching held memory then costs more the longer it
// sat untouched: 8,000 pages read once a round cost 364 µs a round at a 100 ms sleep, 1,265 µs at
// 1 s and 2,731 µs at 3 s with the monitor on, and 283-320 µs at all three with it paused
// (bench/age/wake-parts.c). The agent's idle round moved with it: 0.54-0.69 % of a core as found,
// 0.28-0.32 % paused (10-minute spans, three of each), from the first minute after each switch
// (README, agent numbers).
//   node bench/damon.mjs                         what runs (also printed by bench/agent-idle.mjs)
//   node bench/damon.mjs spans SECONDS COUNT LOG  COUNT times: SECONDS as found, then SECONDS paused;
//                                                 every switch appended to LOG as "<epoch s> <on|off>"
//   node bench/damon.mjs pause SECONDS LOG        paused for SECONDS (a whole bench run), then restored
//   node bench/damon.mjs pages PID...            how many of each process's resident pages lie in the
//                                                 physical ranges the monitors sample (root)
//   node bench/damon.mjs report SAMPLER_LOG LOG [--windows]
//                                                 CPU of each process of bench/age/stat-sampler.sh's
//                                                 log in each span (and in each 60 s window)
// `spans` and `pause` need root; they restore every monitor they paused when they end, are interrupted
// (SIGINT, SIGTERM, SIGHUP) or fail. They pause only monitors that were on, and change nothing else.
import {
  appendFileSync,
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export const DAMON_ADMIN = '/sys/kernel/mm/damon/admin/kdamonds';

const read = (file) => {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
};

const GiB = 1024 ** 3;

/** The numbered entries of an admin directory (kdamonds, contexts, targets, regions, schemes); [] when absent. */
const numbered = (dir) => (existsSync(dir) ? readdirSync(dir).filter((d) => /^\d+$/.test(d)) : []);

/** The kdamonds of this machine: their state file and a one-line description; [] without DAMON. */
export function kdamonds(admin = DAMON_ADMIN) {
  return numbered(admin).map((d) => {
    const dir = join(admin, d);
    const state = read(join(dir, 'state')) ?? 'unknown';
    const contexts = [];
    /** Physical address ranges a `paddr` context samples. */
    const physical = [];
    const cdir = join(dir, 'contexts');
    for (const c of numbered(cdir)) {
      const at = (p) => read(join(cdir, c, p));
      const us = (p) => Number(at(`monitoring_attrs/intervals/${p}`)) / 1000;
      const ranges = [];
      const tdir = join(cdir, c, 'targets');
      for (const t of numbered(tdir)) {
        const rdir = join(tdir, t, 'regions');
        for (const r of numbered(rdir)) {
          const start = Number(read(join(rdir, r, 'start')));
          const end = Number(read(join(rdir, r, 'end')));
          ranges.push(`${(start / GiB).toFixed(2)}-${(end / GiB).toFixed(2)} GiB`);
          if (at('operations') === 'paddr') physical.push([start, end]);
        }
        const pid = read(join(tdir, t, 'pid_target'));
        if (pid && pid !== '0') ranges.push(`PID ${pid}`);
      }
      const actions = [];
      const sdir = join(cdir, c, 'schemes');
      for (const s of numbered(sdir)) {
        actions.push(read(join(sdir, s, 'action')) ?? '?');
      }
      contexts.push(
        `${at('operations') ?? '?'}, sampling every ${us('sample_us')} ms, aggregating every ${us('aggr_us')} ms, ` +
          `${at('monitoring_attrs/nr_regions/min')}-${at('monitoring_attrs/nr_regions/max')} regions` +
          `${ranges.length ? ` over ${ranges.join(', ')}` : ''}${actions.length ? `, schemes: ${actions.join(', ')}` : ''}`,
      );
    }
    return {
      stateFile: join(dir, 'state'),
      state,
      physical,
      description: `kdamond ${d} ${state} (${contexts.join('; ')})`,
    };
  });
}

/** One line for a bench's header. */
export function describeDamon(admin = DAMON_ADMIN) {
  const ks = kdamonds(admin);
  if (ks.length === 0) return 'DAMON: none';
  return `DAMON: ${ks.map((k) => k.description).join('; ')}`;
}

/**
 * How many of a process's resident pages lie where the monitors sample physical memory: a page
 * outside their ranges does not pay for it. Reads /proc/PID/maps and /proc/PID/pagemap (root: the
 * kernel shows page frame numbers to CAP_SYS_ADMIN only).
 */
export function residentInRanges(pid, ranges) {
  const fd = openSync(`/proc/${pid}/pagemap`, 'r');
  let resident = 0;
  let inside = 0;
  const buf = Buffer.alloc(8 * 4096);
  try {
    for (const line of readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n')) {
      const m = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
      if (!m) continue;
      // Page numbers as BigInt: the vsyscall page sits near 2^64.
      const first = BigInt(`0x${m[1]}`) / 4096n;
      const pages = Number((BigInt(`0x${m[2]}`) - BigInt(`0x${m[1]}`)) / 4096n);
      for (let at = 0; at < pages; at += 4096) {
        const n = Math.min(4096, pages - at);
        let got = 0;
        try {
          got = readSync(fd, buf, 0, 8 * n, (first + BigInt(at)) * 8n) / 8;
        } catch {
          break; // a mapping the kernel does not report (vsyscall): nothing resident of ours
        }
        for (let i = 0; i < got; i++) {
          const entry = buf.readBigUInt64LE(i * 8);
          if (!(entry >> 63n)) continue; // not present
          resident++;
          const phys = Number(entry & ((1n << 55n) - 1n)) * 4096;
          if (ranges.some(([lo, hi]) => phys >= lo && phys < hi)) inside++;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return { resident, inside };
}

function setState(file, state) {
  writeFileSync(file, state);
  const now = read(file);
  if (now !== state) throw new Error(`${file}: wrote ${state}, reads ${now}`);
}

/**
 * COUNT times: `found` seconds as found (none: paused from the start), then `paused` seconds with
 * every monitor that was on paused; see the header.
 */
export async function spans(found, paused, count, log, admin = DAMON_ADMIN) {
  if (!(found >= 0) || !(paused > 0) || !(count > 0) || !log) {
    throw new Error('usage: node bench/damon.mjs spans SECONDS COUNT LOG, or pause SECONDS LOG');
  }
  const on = kdamonds(admin).filter((k) => k.state === 'on');
  if (on.length === 0) throw new Error('no DAMON monitor is on here: nothing to pause');
  const note = (state) => appendFileSync(log, `${Math.floor(Date.now() / 1000)} ${state}\n`);
  let isPaused = false;
  /** Every paused monitor on again; one that refuses does not keep the others paused. */
  const restore = () => {
    if (!isPaused) return;
    isPaused = false;
    const failed = [];
    for (const k of on) {
      try {
        setState(k.stateFile, 'on');
      } catch (e) {
        failed.push(e.message);
      }
    }
    note('on');
    if (failed.length) throw new Error(`could not restore: ${failed.join('; ')}`);
  };
  const onSignal = () => {
    restore();
    process.exit(0);
  };
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const sig of signals) process.on(sig, onSignal);
  if (found > 0) note('on');
  try {
    for (let i = 0; i < count; i++) {
      if (found > 0) await sleep(found * 1000);
      // Marked first: a second monitor that refuses to pause must not leave the first one paused.
      isPaused = true;
      for (const k of on) setState(k.stateFile, 'off');
      note('off');
      await sleep(paused * 1000);
      restore();
    }
  } finally {
    try {
      restore();
    } finally {
      for (const sig of signals) process.off(sig, onSignal);
    }
  }
}

/** stat-sampler.sh lines: "<epoch> NAME=utime,stime,rss …" → [{ t, cpu: { NAME: ticks } }]. */
export function parseSamples(text) {
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      const [t, ...kvs] = l.trim().split(/\s+/);
      const cpu = {};
      for (const kv of kvs) {
        const [name, v] = kv.split('=');
        const [u, s] = (v ?? '').split(',').map(Number);
        if (Number.isFinite(u) && Number.isFinite(s)) cpu[name] = u + s;
      }
      return { t: Number(t), cpu };
    });
}

/** Toggle log lines → [{ t, state }] in time order. */
export function parseSwitches(text) {
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      const [t, state] = l.trim().split(/\s+/);
      return { t: Number(t), state };
    })
    .sort((a, b) => a.t - b.t);
}

/** % of one core NAME spent between two samples (clock ticks of 1/100 s); null where it is missing. */
function pct(a, b, name) {
  if (!(name in a.cpu) || !(name in b.cpu) || b.t <= a.t) return null;
  return ((b.cpu[name] - a.cpu[name]) / 100 / (b.t - a.t)) * 100;
}

/**
 * Each process's CPU in each span between switches, the first `settleS` after a switch left out;
 * with `windowS`, also each whole window of that length inside a span.
 */
export function spanReport(samples, switches, { settleS = 60, windowS = 0 } = {}) {
  const names = [...new Set(samples.flatMap((s) => Object.keys(s.cpu)))];
  const end = samples.at(-1)?.t ?? 0;
  const out = [];
  for (let i = 0; i < switches.length; i++) {
    const from = switches[i].t + settleS;
    const to = i + 1 < switches.length ? switches[i + 1].t : end + 1;
    const inside = samples.filter((s) => s.t >= from && s.t < to);
    if (inside.length < 2) continue;
    const first = inside[0];
    const last = inside.at(-1);
    const span = { state: switches[i].state, from: first.t, to: last.t, cpu: {}, windows: {} };
    for (const n of names) {
      span.cpu[n] = pct(first, last, n);
      if (!windowS) continue;
      const ws = [];
      for (let j = 0; j < inside.length; j++) {
        const k = inside.findIndex((s) => s.t >= inside[j].t + windowS);
        if (k < 0) break;
        const p = pct(inside[j], inside[k], n);
        if (p !== null) ws.push(p);
      }
      span.windows[n] = ws.length ? { min: Math.min(...ws), max: Math.max(...ws), n: ws.length } : null;
    }
    out.push(span);
  }
  return { names, spans: out };
}

function report(samplerLog, switchLog, windows) {
  const samples = parseSamples(readFileSync(samplerLog, 'utf8'));
  const switches = parseSwitches(readFileSync(switchLog, 'utf8'));
  if (samples.length < 2 || switches.length === 0) throw new Error('report: too few samples or no switch');
  const { names, spans: rows } = spanReport(samples, switches, { windowS: windows ? 60 : 0 });
  const t0 = samples[0].t;
  const f = (x) => (x === null || x === undefined ? '-' : `${x.toFixed(2)} %`);
  console.log(`DAMON  from     to    ${names.map((n) => n.padStart(10)).join(' ')}`);
  for (const s of rows) {
    console.log(
      `${s.state.padEnd(5)} ${String(s.from - t0).padStart(5)}s ${String(s.to - t0).padStart(5)}s ` +
        names.map((n) => f(s.cpu[n]).padStart(10)).join(' '),
    );
    if (windows) {
      const w = (n) => (s.windows[n] ? `${s.windows[n].min.toFixed(2)}-${s.windows[n].max.toFixed(2)}` : '-');
      console.log(`  60 s windows ${' '.repeat(6)}${names.map((n) => w(n).padStart(10)).join(' ')}`);
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [cmd, ...args] = process.argv.slice(2);
  try {
    if (!cmd) console.log(describeDamon());
    else if (cmd === 'spans') await spans(Number(args[0]), Number(args[0]), Number(args[1]), args[2]);
    else if (cmd === 'pause') await spans(0, Number(args[0]), 1, args[1]);
    else if (cmd === 'pages') {
      const ranges = kdamonds().flatMap((k) => k.physical);
      for (const pid of args) {
        const { resident, inside } = residentInRanges(pid, ranges);
        console.log(
          `PID ${pid}: ${inside} of ${resident} resident pages where DAMON samples physical memory`,
        );
      }
    } else if (cmd === 'report') report(args[0], args[1], args.includes('--windows'));
    else throw new Error(`unknown command ${cmd}: none, spans, pause, pages or report`);
  } catch (e) {
    console.error(`bench/damon.mjs: ${e.message}`);
    process.exit(1);
  }
}
