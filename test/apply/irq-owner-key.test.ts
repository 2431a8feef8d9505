// An IRQ number that passed from one device to another between two applies names two objects: the
// journal's fold keeps both entries (each device's value before isolate), not only the first owner's.
import { describe, expect, it } from 'vitest';
import { objectKey } from '../../src/apply/identity.js';
import { foldJournal, type Journal, newJournal } from '../../src/apply/journal.js';
import type { Change } from '../../src/model/plan.js';

const A = { actions: ['virtio2-input.1'], chip: 'PCI-MSI 2623491-edge', pci: '0000:05:04.0' };
const B = { actions: ['nvme0q5'], chip: 'PCI-MSI 2625541-edge', pci: '0000:05:05.0' };
const irq36 = (owner: typeof A, to: string): Change =>
  ({
    backend: 'irq',
    target: '/proc/irq/36',
    setting: 'smp_affinity_list',
    from: '0-7',
    to,
    owner,
  }) as Change;

function journal(change: Change, previous: string): Journal {
  const j = newJournal(undefined, 'unknown');
  j.state = 'applied';
  j.entries.push({ seq: 1, change, previous, status: 'done' });
  return j;
}

describe('IRQ owner in the journal key', () => {
  it('the same number held by another device is another object', () => {
    expect(objectKey(irq36(A, '4-5'))).not.toBe(objectKey(irq36(B, '4-5')));
    expect(objectKey(irq36(A, '4-5'))).toBe(objectKey(irq36(A, '6-7')));
  });

  it("folding keeps both owners' values before isolate", () => {
    const folded = foldJournal(
      foldJournal(null, journal(irq36(A, '4-5'), '0-7'), () => true),
      journal(irq36(B, '4-5'), '2-3'),
      () => true,
    );
    expect(
      folded.entries.map((e) => [e.change.backend === 'irq' && e.change.owner?.pci, e.previous]),
    ).toEqual([
      ['0000:05:04.0', '0-7'],
      ['0000:05:05.0', '2-3'],
    ]);
  });
});
