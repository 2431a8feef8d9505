// What the CLI prints goes straight to file descriptors 1 and 2 with write(2). process.stdout is
// avoided on purpose: its first use loads Node's whole stream stack (some twenty internal modules,
// ~5 ms), a fifth of what a short command like `isolate plan --dry-run` costs beyond starting Node.
// Written synchronously, in order, complete before the process exits: what a CLI needs.
import { writeSync } from 'node:fs';

const closed = new Set<number>();
let pause: Int32Array | undefined;

/**
 * Writes all of `text` to `fd`. A descriptor some other program left non-blocking (a shared pipe)
 * answers EAGAIN when full: wait a millisecond and go on. A reader that went away (EPIPE: `isolate
 * plan | head -1`) ends the output quietly, as it ends `cat`'s; the command's exit status stays.
 */
export function writeAll(fd: number, text: string): void {
  if (closed.has(fd)) return;
  const bytes = Buffer.from(text, 'utf8');
  let off = 0;
  while (off < bytes.length) {
    try {
      off += writeSync(fd, bytes, off, bytes.length - off);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        pause ??= new Int32Array(new SharedArrayBuffer(4));
        Atomics.wait(pause, 0, 0, 1);
      } else if (code === 'EPIPE') {
        closed.add(fd);
        return;
      } else {
        throw err;
      }
    }
  }
}

/** Standard output of the CLI. */
export const writeOut = (text: string): void => writeAll(1, text);

/** Standard error of the CLI. */
export const writeErr = (text: string): void => writeAll(2, text);
