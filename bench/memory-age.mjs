// Whether memory a process has held for a while costs more to touch than memory it just mapped, on this
// machine. bench/agent-idle.mjs found the agent's CPU rising with its age (0.31-0.36 % of a core in its
// first minutes, 0.45-0.60 % after 10-20 min) while a twin started later cost less, for the same work,
// with its system time unchanged and the rise in V8's builtins (2026-12-04). This takes the agent out:
// one 16 MB buffer mapped at the start (held), one mapped anew every minute (fresh); every second one
// read from each page of each, in turn, timed by the clock; the median pass per minute (so a pass the
// scheduler interrupted does not count), in ns a page.
// On the 2-core VMs (Firecracker, PVM: the guest's page tables are shadowed by the host; /proc/cmdline
// and dmesg name it), 2026-12-04 09:52-10:17 UTC, this and a C program like bench/memory-age.c: a read
// cost 40-70 ns a page at first and 250-600 ns half an hour later, fresh memory too, so the machine's
// price of touching a page moved ~10x within the hour; in between, memory held for 2-9 minutes cost
// 1.3-2.7x what memory mapped that minute cost (bench/memory-age.c, also renewing a held buffer's pages
// or its addresses, did not tell which of them ages). Agents running beside it got dearer in the same
// minutes, so run it alone: it touches 32 MB a second itself. On a host whose CPU walks the guest's page
// tables itself (EPT/NPT), or on bare metal, both are expected to stay flat (not measured: no such
// machine here).
//   node bench/memory-age.mjs [minutes]
import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

const minutes = Number(process.argv[2] ?? 20);
if (!(minutes >= 1)) throw new Error(`minutes: expected a number ≥ 1, got ${process.argv[2]}`);

// glibc serves a 16 MB allocation from a mapping of its own only below its mmap threshold, which it
// raises when such a mapping is freed: a fixed threshold keeps every new buffer a new mapping, and
// `gc` frees the old one before the next is made.
if (!process.env.GLIBC_TUNABLES?.includes('mmap_threshold') || typeof globalThis.gc !== 'function') {
  const r = spawnSync(process.execPath, ['--expose-gc', ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=131072' },
  });
  process.exit(r.status ?? 1);
}

const SIZE = 16 << 20;
const PAGE = 4096;
const PAGES = SIZE / PAGE;
/** A buffer with every cache line written: its pages are mapped and present. */
const mapped = () => {
  const b = new Uint8Array(new ArrayBuffer(SIZE));
  for (let o = 0; o < SIZE; o += 64) b[o] = o >> 6;
  return b;
};
let sink = 0;
/** ns to read one byte of every page (each page at another line, so no line is read twice). */
const pass = (b) => {
  const t0 = process.hrtime.bigint();
  let s = 0;
  for (let p = 0; p < PAGES; p++) s += b[p * PAGE + ((p * 64) % PAGE)];
  sink += s;
  return Number(process.hrtime.bigint() - t0);
};
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];

const held = mapped();
let fresh = null;
const start = Date.now();
console.log(`one read a page of two ${SIZE >> 20} MB buffers every second; median per minute, ns a page`);
for (let m = 0; m < minutes; m++) {
  fresh = null;
  globalThis.gc();
  fresh = mapped();
  const h = [];
  const f = [];
  for (let s = 0; s < 60; s++) {
    await sleep(1000);
    // In turn, so that neither is always the first after the wake-up.
    if (s % 2) {
      h.push(pass(held));
      f.push(pass(fresh));
    } else {
      f.push(pass(fresh));
      h.push(pass(held));
    }
  }
  const age = Math.round((Date.now() - start) / 1000);
  console.log(
    `${String(age).padStart(5)} s: held since the start ${(median(h) / PAGES).toFixed(0)}, mapped this minute ${(median(f) / PAGES).toFixed(0)}`,
  );
}
if (sink === 0.5) console.log(sink); // keeps the reads
