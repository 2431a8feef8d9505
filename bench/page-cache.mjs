// How a binary entered the page cache moves what running it costs on these VMs, where a page fault
// costs 13-18 µs: read through sequentially (readahead's large folios), `node -e 0` took 2,476 faults
// against 2,782 when an exec paged it in; and the agent, side by side with the same build, 0.98-1.02 %
// of a core and 88 MB resident (74 MB of it file pages) read through, 0.67-0.91 % and 56 MB paged in by
// its exec (2026-12-02, bench/agent-idle.mjs); freshly written by `npm run package`, 69-74 MB, while a
// `cp` of another build measured 56 MB. Benches put the binaries they time in a known state.
import { spawnSync } from 'node:child_process';

/** Drops a file's clean pages from the page cache (dd iflag=nocache count=0: posix_fadvise DONTNEED). */
export function dropFromPageCache(file) {
  const dd = spawnSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none'], { encoding: 'utf8' });
  if (dd.status !== 0) throw new Error(`dd iflag=nocache ${file}: ${dd.stderr}`);
}

/** ...and reads it through once (`cat`): the state a sequential read leaves it in. */
export function readThrough(file) {
  dropFromPageCache(file);
  const cat = spawnSync('cat', [file], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (cat.status !== 0) throw new Error(`cat ${file} failed`);
}
