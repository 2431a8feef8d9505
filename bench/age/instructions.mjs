// How many instructions one idle round of the agent executes, and how many L1 data misses, at
// several ages of one agent: a count that does not depend on this VM's price of an instruction or of
// a memory access, which moves through the hour (README, "whether the agent's cost rises with its
// age"). Runs a twin (bench/age/twin.sh) under valgrind's callgrind beside a running
// bench/agent-idle.mjs, and at each age (minutes after its start) zeroes callgrind's counters, waits
// 60 s and dumps them; the rounds of the window come from the twin's /metrics.
//   node bench/age/instructions.mjs NAME PORT AGE_MIN...   e.g. ... cg 19486 6 20 45
//   node bench/age/instructions.mjs --summary FILE...      (sum dumps made before)
// Root only, like the bench; valgrind from Debian's package. Under callgrind a round runs ~50 times
// slower, so the twin manages ~55 rounds a minute instead of 60: figures are per round. valgrind's own
// memory grows, which the agent reads as heap growth and compacts for (src/agent/agent.ts), so most
// windows hold a full GC (~100 M instructions): compare what is outside the collector.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Self cost (Ir, D1mr) per function of one callgrind dump, with name compression resolved. */
export function selfCosts(text) {
  const names = new Map();
  const ir = new Map();
  const d1 = new Map();
  // Columns of Ir and D1mr among a cost line's events (from the `events:` header).
  let irAt = -1;
  let d1At = -1;
  // Each cost line starts with its position columns ("positions: line" by default, "instr line" with
  // --dump-instr=yes), then one number per event.
  let positions = 1;
  let fn = null;
  let callLine = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('events:')) {
      const events = line.slice(7).trim().split(/\s+/);
      irAt = events.indexOf('Ir');
      d1At = events.indexOf('D1mr');
    } else if (line.startsWith('positions:')) positions = line.slice(10).trim().split(/\s+/).length;
    else if (line.startsWith('fn=') || line.startsWith('cfn=')) {
      const m = /^c?fn=\((\d+)\)(?: (.*))?$/.exec(line);
      const id = m ? m[1] : line.slice(line.indexOf('=') + 1);
      if (m?.[2]) names.set(id, m[2]);
      if (line.startsWith('fn=')) {
        fn = id;
        callLine = false;
      }
    } else if (line.startsWith('calls=')) callLine = true;
    else if (/^[0-9+\-*]/.test(line)) {
      // The line after calls= is the call's inclusive cost, not the function's own.
      if (callLine) {
        callLine = false;
        continue;
      }
      if (fn === null) continue;
      const v = line.split(/\s+/).slice(positions).map(Number);
      ir.set(fn, (ir.get(fn) ?? 0) + (v[irAt] || 0));
      if (d1At >= 0) d1.set(fn, (d1.get(fn) ?? 0) + (v[d1At] || 0));
    }
  }
  const out = new Map();
  // Names repeat across objects (a static function in two libraries): their costs add up.
  for (const [id, n] of ir) {
    const name = names.get(id) ?? id;
    const c = out.get(name) ?? { ir: 0, d1: 0 };
    out.set(name, { ir: c.ir + n, d1: c.d1 + (d1.get(id) ?? 0) });
  }
  return out;
}

/** Where an instruction was spent, coarsely: the collector, V8's builtins (its interpreter and ICs), ... */
export function kindOf(name) {
  if (
    /^v8::internal::(\w+::)*(Mark|Sweep|Scaveng|Heap|Evacuat|Compact|RememberedSet|SlotSet|MemoryAllocator|PagedSpace|FreeList|InternalizedStringTableCleaner)/.test(
      name,
    ) ||
    /Visitor|BodyDescriptor|IterateObjectCache|Collector|ActiveSystemPages|__popcount/.test(name)
  )
    return 'gc';
  if (name.startsWith('Builtins_')) return 'builtins';
  if (name.startsWith('0x')) return 'compiled JS';
  if (name.includes('v8::')) return 'v8 runtime';
  if (name.includes('node::') || /^uv_|^uv__/.test(name)) return 'node+libuv';
  return 'libc and other';
}

export function summarize(file, rounds) {
  const costs = selfCosts(readFileSync(file, 'utf8'));
  let ir = 0;
  let d1 = 0;
  const kinds = new Map();
  for (const [name, c] of costs) {
    ir += c.ir;
    d1 += c.d1;
    const k = kindOf(name);
    kinds.set(k, (kinds.get(k) ?? 0) + c.ir);
  }
  const per = (n) => (rounds > 0 ? n / rounds : n);
  const unit = rounds > 0 ? 'a round' : 'in all';
  const lines = [
    // A full GC falls in some windows and not others (V8's, or the agent's compaction): the rest is
    // what a round itself does.
    `${file}: ${rounds > 0 ? `${rounds} rounds, ` : ''}${(per(ir) / 1e6).toFixed(2)} M instructions ${unit} (${(per(ir - (kinds.get('gc') ?? 0)) / 1e6).toFixed(2)} M outside the collector), ${(per(d1) / 1e3).toFixed(1)} k L1 data read misses ${unit}`,
    `  ${[...kinds]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k} ${(per(n) / 1e6).toFixed(2)} M`)
      .join(', ')}`,
  ];
  for (const [name, c] of [...costs].sort((a, b) => b[1].ir - a[1].ir).slice(0, 12))
    lines.push(`  ${(per(c.ir) / 1e3).toFixed(0).padStart(7)} k  ${name.slice(0, 110)}`);
  return lines.join('\n');
}

async function rounds(port) {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  const text = await res.text();
  let n = 0;
  for (const m of text.matchAll(/^isolate_reconciles_total\{[^}]*\} (\d+)/gm)) n += Number(m[1]);
  return n;
}

async function main(argv) {
  if (argv[0] === '--summary') {
    for (const f of argv.slice(1)) console.log(summarize(f, 0));
    return;
  }
  const [name, port, ...ages] = argv;
  if (!name || !/^\d+$/.test(port ?? '') || ages.length === 0 || ages.some((a) => !/^\d+$/.test(a)))
    throw new Error(
      'usage: node bench/age/instructions.mjs NAME PORT AGE_MIN... (beside a running bench/agent-idle.mjs)',
    );
  const out = `/tmp/${name}.cg`;
  const wrap = `valgrind --tool=callgrind --smc-check=all-non-file --cache-sim=yes --LL=33554432,16,64 --callgrind-out-file=${out}.%p`;
  const started = Date.now();
  const said = execFileSync(join(here, 'twin.sh'), [name, port], {
    env: { ...process.env, TWIN_WRAP: wrap },
    encoding: 'utf8',
  });
  const pid = /pid=(\d+)/.exec(said)?.[1];
  if (!pid) throw new Error(`twin.sh printed no PID: ${said}`);
  console.log(`${name}: callgrind twin pid ${pid}, dumps ${out}.${pid}.N`);
  for (const age of ages.map(Number).sort((a, b) => a - b)) {
    const wait = started + age * 60_000 - Date.now();
    if (wait > 0) await sleep(wait);
    // Rounds are read outside the window: a scrape inside it would be counted as the round's work.
    const r0 = await rounds(port);
    execFileSync('callgrind_control', ['-z', pid], { stdio: 'ignore' });
    await sleep(60_000);
    execFileSync('callgrind_control', ['-d', `age${age}`, pid], { stdio: 'ignore' });
    const r1 = await rounds(port);
    const dumps = readdirSync('/tmp')
      .filter((f) => f.startsWith(`${name}.cg.${pid}.`))
      .sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()));
    console.log(`age ${age} min: ${summarize(join('/tmp', dumps.at(-1)), r1 - r0)}`);
  }
  console.log(`stop the twin: pkill -f -- "--root $(ls -d /tmp/isolate-agent-bench-??????)-${name} "`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err) => {
    console.error(err.message);
    process.exit(1);
  });
}
