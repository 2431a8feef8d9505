import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root, derived from this file so the harness works from any cwd (vitest, scripts). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Gitignored; holds the extracted kernel and the cached base initramfs archives. */
export const VM_CACHE = process.env.ISOLATE_VM_CACHE ?? join(REPO_ROOT, '.vm-cache');
