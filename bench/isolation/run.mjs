// Entry point of `npm run bench:isolation`: bundles the TypeScript (bench/isolation/main.ts and the qemu
// harness it uses) with esbuild, as bench/check-vm-kit.mjs does, and runs it with plain node.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const repo = join(dirname(fileURLToPath(import.meta.url)), '../..');
// Three levels below the repository, like test/vm/harness: the harness finds the repo from its own URL.
const out = join(repo, '.vm-cache', 'bench', 'isolation', 'main.mjs');
mkdirSync(dirname(out), { recursive: true });
await build({
  entryPoints: [join(repo, 'bench/isolation/main.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  packages: 'external',
  outfile: out,
  logLevel: 'warning',
});
const { main } = await import(`${pathToFileURL(out).href}?t=${Date.now()}`);
process.exitCode = await main(process.argv.slice(2));
