// A path as the host under --root sees it: symbolic links followed inside the root, never out of it
// (an absolute link target means the root's own `/`, as on the host). realpath(3) on `<root>/<path>`
// would follow `/data -> /mnt/disk1` into the machine running isolate instead of the captured tree.
import { lstatSync, readlinkSync } from 'node:fs';

/** The kernel's own limit on links followed in one lookup (ELOOP). */
const MAX_LINKS = 40;

export type RootPath =
  | { ok: true; path: string }
  | { ok: false; code: 'ENOENT' | 'ELOOP' | 'ENOTDIR' | 'EACCES' | 'EIO'; at: string };

/** `path` (absolute) with every symbolic link resolved under `root`; or where and why it stopped. */
export function resolveUnderRoot(root: string, path: string): RootPath {
  const base = root.replace(/\/+$/, '');
  const todo = path.split('/').filter((p) => p !== '' && p !== '.');
  let at: string[] = [];
  let links = 0;
  while (todo.length > 0) {
    const part = todo.shift()!;
    if (part === '..') {
      at = at.slice(0, -1);
      continue;
    }
    const next = [...at, part];
    const here = `/${next.join('/')}`;
    let isLink: boolean;
    try {
      const st = lstatSync(base + here);
      isLink = st.isSymbolicLink();
      if (!isLink && !st.isDirectory() && todo.length > 0) return { ok: false, code: 'ENOTDIR', at: here };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return {
        ok: false,
        code: code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES' ? code : 'EIO',
        at: here,
      };
    }
    if (!isLink) {
      at = next;
      continue;
    }
    if (++links > MAX_LINKS) return { ok: false, code: 'ELOOP', at: here };
    let target: string;
    try {
      target = readlinkSync(base + here);
    } catch {
      return { ok: false, code: 'EIO', at: here };
    }
    if (target.startsWith('/')) at = [];
    todo.unshift(...target.split('/').filter((p) => p !== '' && p !== '.'));
  }
  return { ok: true, path: `/${at.join('/')}` };
}
