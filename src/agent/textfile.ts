// `isolate agent --metrics-textfile FILE`: isolate's metrics for node_exporter's textfile collector,
// checked once at start (so a wrong path fails the deploy, not a round) and rewritten after every round.
import { accessSync, constants, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { UserError } from '../model/errors.js';
import type { LogFn } from '../model/log.js';
import { writeFileAtomic } from '../sys/write.js';
import type { AgentMetrics } from './metrics.js';

/**
 * World-readable: node_exporter runs as its own user (Debian: prometheus) and reads the file with
 * nothing but the other-read bit; the metrics hold no secret (the same names the HTTP endpoint serves).
 */
export const TEXTFILE_MODE = 0o644;

/** Debian's node_exporter reads this directory unless --collector.textfile.directory says otherwise. */
export const DEBIAN_TEXTFILE_DIR = '/var/lib/prometheus/node-exporter';

/**
 * Refuses (UserError) a textfile the collector would never read or the agent could never write: a name
 * not ending in `.prom` (the collector reads `*.prom` only), a directory that is missing, or one the
 * agent may not write — under isolate.service that is every directory outside its ReadWritePaths=
 * (ProtectSystem=strict mounts the rest read-only, and access(2) says EROFS).
 */
export function checkTextfile(file: string): void {
  const flag = `--metrics-textfile ${file}`;
  if (!basename(file).endsWith('.prom') || basename(file) === '.prom') {
    throw new UserError(
      `${flag}: node_exporter's textfile collector reads only files named *.prom; name it e.g. ${dirname(file)}/isolate.prom`,
    );
  }
  const dir = dirname(file);
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(
      `${flag}: ${code === 'ENOENT' ? `directory ${dir} does not exist` : `cannot use directory ${dir} (${code})`}; give node_exporter's --collector.textfile.directory (Debian: ${DEBIAN_TEXTFILE_DIR})`,
    );
  }
  if (!isDir) throw new UserError(`${flag}: ${dir} is not a directory`);
  try {
    accessSync(dir, constants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(
      code === 'EROFS'
        ? `${flag}: ${dir} is read-only for the agent (isolate.service's ProtectSystem=strict); allow it with a drop-in: [Service] ReadWritePaths=${dir} (docs/monitoring.md)`
        : `${flag}: the agent may not write ${dir} (${code})`,
    );
  }
}

/**
 * What runs after every round. A write that fails (a full disk) is logged, once per distinct error, and
 * tried again after the next round: the metrics file is never a reason to stop keeping the fence.
 */
export function textfileWriter(file: string, metrics: AgentMetrics, log: LogFn): () => Promise<void> {
  let failing: string | null = null;
  return async () => {
    try {
      await writeFileAtomic(file, await metrics.textfile(), { mode: TEXTFILE_MODE });
      if (failing !== null) log('info', 'metrics textfile written again', { file });
      failing = null;
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      if (error !== failing) log('warn', 'metrics textfile not written', { file, error });
      failing = error;
    }
  };
}
