// The R630 fixture host (four disks, Kafka's log.dirs from server.properties) with a unified cgroup tree
// whose Kafka and YARN groups have the io controller: the io tests' host, shared.
import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GROUP_FILES, r630DisksRoot } from './fake-host.js';

/** A group's files where io is enabled: no target, no cap, the default weights. */
export const IO_GROUP_FILES: Record<string, string> = {
  ...GROUP_FILES,
  'cgroup.controllers': 'cpuset cpu io memory',
  'io.latency': '',
  'io.weight': 'default 100',
  'io.bfq.weight': 'default 100',
  'io.max': '',
};

/** `/kafka.slice` and `/hadoop-yarn` under a cgroup2 root; `ioEnabled: false` leaves io out of the root's subtree_control. */
export function r630IoHost(prefix: string, opts: { ioEnabled?: boolean } = {}): string {
  const root = r630DisksRoot(mkdtempSync(join(tmpdir(), prefix)));
  // The fixture's mount table has no cgroup2 mount: add the one a unified host has.
  appendFileSync(
    join(root, 'proc/self/mountinfo'),
    '35 23 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate\n',
  );
  const cg = join(root, 'sys/fs/cgroup');
  mkdirSync(cg, { recursive: true });
  writeFileSync(join(cg, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
  writeFileSync(
    join(cg, 'cgroup.subtree_control'),
    `cpuset cpu ${opts.ioEnabled === false ? '' : 'io '}memory\n`,
  );
  for (const g of ['kafka.slice', 'hadoop-yarn']) {
    mkdirSync(join(cg, g));
    for (const [f, v] of Object.entries(IO_GROUP_FILES))
      writeFileSync(join(cg, g, f), v === '' ? '' : `${v}\n`);
  }
  mkdirSync(join(root, 'etc/isolate'), { recursive: true });
  return root;
}
