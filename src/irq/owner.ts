// Who holds an IRQ number or a NIC name now, read live as the observer reads it at plan time
// (observe.ts), so the executor can tell the object a change was planned and journaled for from
// another device that got its number or name since.
import path from 'node:path';
import type { IrqOwner } from '../model/irq.js';
import { ReadRefused, readBoundedIfPresent, UnreadableError } from '../sys/read.js';
import { parseCounts, splitActions } from './counts.js';
import { nicDevice, readPciFunctions } from './observe.js';

/** /proc/interrupts of a 1024-CPU host with thousands of vectors runs to megabytes (as observe.ts). */
const INTERRUPTS = { maxBytes: 64 * 1024 * 1024 };

/**
 * The owner of every IRQ number now: its /proc/interrupts row (no row: no handler) and its PCI
 * function, read once for a batch of changes (a 1024-CPU host's table runs to tens of megabytes).
 * Throws UnreadableError when /proc/interrupts cannot be read: owners are then unknown, not none.
 */
export function liveIrqOwners(root: string): (irq: string) => IrqOwner {
  const file = path.join(root, 'proc/interrupts');
  let text: string | null;
  try {
    text = readBoundedIfPresent(file, INTERRUPTS);
  } catch (err) {
    throw new UnreadableError(file, err instanceof ReadRefused ? err.code : 'EIO');
  }
  if (text === null) throw new UnreadableError(file, 'ENOENT');
  const rows = new Map(parseCounts(text).rows.map((r) => [r.id, splitActions(r.rest)]));
  const pci = readPciFunctions(root).byIrq;
  return (irq) => {
    const { chip, actions } = rows.get(irq) ?? { chip: '', actions: [] };
    return { actions, chip, pci: pci.get(Number(irq)) ?? null };
  };
}

/** The owner of NIC `name` now (its PCI function), as the planner records a queue's. */
export function liveNicOwner(root: string, name: string): IrqOwner {
  return { pci: nicDevice(path.join(root, 'sys/class/net'), name).pci };
}
