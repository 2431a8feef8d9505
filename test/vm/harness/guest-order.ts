import { availableParallelism } from 'node:os';

/**
 * The guest files that go first, longest first (their times: test/vm/README.md): the sequencer starts
 * them first and the guest slots serve them first (harness/slots.ts). Two guests run at a time: started
 * last, the longest one (role-systemd, ~15 minutes as one host thread) would run alone at the end while
 * the other core idles.
 */
export const LONGEST_GUESTS = [
  'test/vm/role-systemd.test.ts',
  'test/vm/quiet-cores.test.ts',
  'test/vm/systemd-jvm.test.ts',
  'test/vm/systemd-rollback.test.ts',
  'test/vm/cgroupv1.test.ts',
  'test/vm/systemd-strict.test.ts',
  'test/vm/agent-systemd.test.ts',
];

/** A file's place in that order (path relative to the repository); every other file after them. */
export function guestRank(file: string): number {
  const i = LONGEST_GUESTS.indexOf(file);
  return i < 0 ? LONGEST_GUESTS.length : i;
}

/**
 * How many qemu guests run at once across the suite's processes (harness/slots.ts): ISOLATE_VM_GUESTS
 * when a positive integer, else two on a machine with two CPUs or more, one on a single CPU. With two,
 * each guest is one host thread (TCG `thread=single`, harness/run.ts says why), so two fill this 2-core
 * machine; more than two is untried. Here, not in slots.ts, because vitest.config.ts reads it too.
 */
export function guestSlots(): number {
  const n = Number(process.env.ISOLATE_VM_GUESTS);
  if (Number.isInteger(n) && n >= 1) return n;
  return availableParallelism() >= 2 ? 2 : 1;
}
