// The host lock as it was before issue 8 (src/raid/hostlock.ts until then): create with O_EXCL, and
// on a dead holder delete the file without checking it still belongs to that holder. Kept only so
// the contention harness can show what src/sys/lock.ts fixes (bench/lock-contention.mjs).
import { open, readFile, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

export async function acquireNaive(path: string, waitMs: number): Promise<(() => Promise<void>) | null> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const fh = await open(path, 'wx');
      await fh.writeFile(`${process.pid}\n`);
      await fh.close();
      return async () => {
        await rm(path, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = (await readFile(path, 'utf8').catch(() => '')).trim();
    if (holder !== '' && !alive(Number(holder))) {
      await rm(path, { force: true });
      continue;
    }
    if (Date.now() >= deadline) return null;
    await sleep(5 + Math.random() * 10);
  }
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
