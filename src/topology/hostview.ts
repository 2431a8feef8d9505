// Whose files a path names. The agent runs with PrivateTmp=yes and ProtectHome=yes (systemd/
// isolate.service): in its own mount namespace /tmp is an empty private directory and /home, /root
// and /run/user are empty, so Kafka's default log.dirs=/tmp/kafka-logs, or a data directory under
// /home, would not be the broker's — the CLI, in the host's namespace, sees them. Data paths are
// therefore resolved in the host's mount namespace, PID 1's, reached through /proc/1/root (the agent
// has CAP_SYS_PTRACE, which the kernel asks for there), with PID 1's own mount table.
//
// Under --root the same question is asked of the root: `<root>/proc/self/ns/mnt` against
// `<root>/proc/1/ns/mnt`, and the host's view is `<root>/proc/1/root`. A captured tree without those
// links is one view, the root itself, as before.
import { readlinkSync, statSync } from 'node:fs';

export interface HostView {
  /** Prefix for paths as the host sees them ('' for the running host's own `/`). */
  files: string;
  /** The mount table of that view, as a path under the root. */
  mountinfo: string;
  /** The host's view could not be reached: data paths are this namespace's, which may differ. */
  problem?: string;
}

/** Where systemd's PrivateTmp=, ProtectHome= put something else than the host's directories. */
const SANDBOXED = /^\/(tmp|var\/tmp|home|root|run\/user)(\/|$)/;

/** Whether a path lies where the agent's sandbox shows something else than the host has. */
export function sandboxedPath(path: string): boolean {
  return SANDBOXED.test(path);
}

function nsOf(file: string): string | null {
  try {
    return readlinkSync(file);
  } catch {
    return null;
  }
}

/**
 * The view data paths are resolved in under `root` ('' or '/' for this host). Same namespace as PID 1,
 * or one that cannot be told (a namespace link unreadable, as to an unprivileged user): the root itself.
 */
export function hostView(root: string): HostView {
  const base = root.replace(/\/+$/, '');
  const own: HostView = { files: base, mountinfo: '/proc/self/mountinfo' };
  const mine = nsOf(`${base}/proc/self/ns/mnt`);
  const init = nsOf(`${base}/proc/1/ns/mnt`);
  if (mine === null || init === null || mine === init) return own;
  const files = `${base}/proc/1/root`;
  try {
    if (!statSync(`${files}/`).isDirectory()) throw Object.assign(new Error(), { code: 'ENOTDIR' });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
    return {
      ...own,
      problem: `isolate runs in a mount namespace of its own (${mine}; the host's is ${init}: the agent's PrivateTmp=/ProtectHome=) and cannot reach the host's through ${files} (${code}): a data directory under /tmp, /var/tmp or /home is not the broker's here; give the agent CAP_SYS_PTRACE, or move the data off those directories`,
    };
  }
  return { files, mountinfo: '/proc/1/mountinfo' };
}
