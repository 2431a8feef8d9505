// A --root with a real machine's sysfs tree and the IRQ overlay of the same name laid over it
// (test/fixtures/irq/README.md), in a fresh temporary directory the test may change.
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures');

export function irqHost(name = 'qemu-2s-smt2'): string {
  const root = mkdtempSync(path.join(tmpdir(), 'isolate-irq-'));
  cpSync(path.join(FIXTURES, 'sysfs', name), root, { recursive: true, verbatimSymlinks: true });
  cpSync(path.join(FIXTURES, 'irq', name), root, { recursive: true, verbatimSymlinks: true, force: true });
  return root;
}
