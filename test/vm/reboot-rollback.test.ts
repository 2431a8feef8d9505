// A rollback after a reboot (issue 60), on a real kernel: two boots of the two-socket guest share one
// state disk, as /var/lib survives a real host's reboot (a raw virtio disk, serial isolate-state:
// /var/lib/isolate is tarred onto it at the end of boot 1 and unpacked from it at the start of boot 2).
//
// Boot 1 applies a policy with quiet IRQs: Kafka's stand-in moved into its cgroup, /hadoop-yarn fenced,
// every movable IRQ off Kafka's CPUs. Boot 2 is another boot (a new boot_id) whose devices came up in
// another order: a second disk, on a PCI slot enumerated first, takes the state disk's virtio index and
// IRQ numbers, as a disk or NIC added, or a changed probe order, does on a real host. The stand-ins have
// new PIDs; isolate's own cgroups are gone. Before the rollback every IRQ is moved to CPU 7 (boot 2's
// own placement, as irqbalance would make it). The rollback must restore what is the same object (an IRQ
// whose owner is the one journaled: the serial port's, the ACPI interrupt's), leave boot 2's masks on the
// IRQs another device owns now and name each, skip and name the processes of boot 1, leave every cgroup
// file as boot 2 had it, and exit 0; a second rollback has nothing to do, and an apply and a rollback
// afterwards work as on any host.
import { closeSync, ftruncateSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { LAYOUTS } from './harness/index.js';
import { snapDiff } from './support/guest.js';
import { vmScenario } from './support/scenario.js';

const POLICY = stringify({
  apiVersion: 'isolate/v1',
  kind: 'HostPolicy',
  reserved: { cores: 1 },
  quiet: { irqs: true },
  workloads: [
    { name: 'kafka', class: 'exclusive', cores: 1, match: { process: { cmdline: 'kafka\\.Kafka' } } },
    { name: 'yarn', class: 'batch', match: { cgroup: '/hadoop-yarn' } },
  ],
});

/** Boot 2's own placement of every IRQ before the rollback. */
const BOOT2_MASK = '7';

// Shell shared by both boots: the state disk found by its serial, and every IRQ's mask and owner.
const COMMON = `
. /harness/lib.sh
for i in $(seq 100); do ls /sys/block/vd* >/dev/null 2>&1 && [ -n "$(cat /sys/block/vd*/serial 2>/dev/null | grep isolate-state)" ] && break; sleep 0.1; done
STATE=
for b in /sys/block/vd*; do [ "$(cat $b/serial 2>/dev/null)" = isolate-state ] && STATE=/dev/$(basename $b); done
# IRQ MASK OWNER for every IRQ; OWNER is what says which device's it is: its actions, chip, hwirq and
# the PCI function whose MSI it is (or "-"), joined by "|".
irqs() {
  for d in /proc/irq/[0-9]*; do
    n=$(basename $d); k=/sys/kernel/irq/$n; pci=-
    for p in /sys/bus/pci/devices/*; do [ -e $p/msi_irqs/$n ] && pci=$(basename $p); done
    echo "$n $(cat $d/smp_affinity_list) $(cat $k/actions)|$(cat $k/chip_name)|$(cat $k/hwirq)|$pci"
  done
}
`;

const BOOT1 = `${COMMON}
sec boot1-state-disk; echo "$STATE"; endsec boot1-state-disk
sec boot1-id; cat /proc/sys/kernel/random/boot_id; endsec boot1-id
fake_host
standin kafka.Kafka 4 sleep &
sleep 1
sec boot1-irqs-before; irqs; endsec boot1-irqs-before
run boot1-apply isolate apply --yes
sec boot1-irqs-applied; irqs; endsec boot1-irqs-applied
sec boot1-journal; cat /var/lib/isolate/journal.json; endsec boot1-journal
tar cf $STATE -C /var/lib/isolate . && sync
sec boot1-saved; echo "rc=$?"; endsec boot1-saved
`;

const BOOT2 = `${COMMON}
sec boot2-state-disk; echo "$STATE"; endsec boot2-state-disk
sec boot2-id; cat /proc/sys/kernel/random/boot_id; endsec boot2-id
mkdir -p /var/lib/isolate && tar xf $STATE -C /var/lib/isolate
sec boot2-restored; ls /var/lib/isolate; endsec boot2-restored
fake_host
standin kafka.Kafka 4 sleep &
sleep 1
for d in /proc/irq/[0-9]*; do echo ${BOOT2_MASK} > $d/smp_affinity_list 2>/dev/null; done
sec boot2-irqs-before; irqs; endsec boot2-irqs-before
sec boot2-before-snap; snap; endsec boot2-before-snap
run boot2-dry isolate rollback --dry-run
run boot2-rollback isolate rollback
sec boot2-irqs-after; irqs; endsec boot2-irqs-after
sec boot2-after-snap; snap; endsec boot2-after-snap
run boot2-rollback-again isolate rollback
run boot2-apply isolate apply --yes
run boot2-rollback-last isolate rollback
sec boot2-last-snap; snap; endsec boot2-last-snap
`;

/** IRQ number → { mask, owner } from an `irqs` section. */
function irqTable(text: string): Map<number, { mask: string; owner: string }> {
  const m = new Map<number, { mask: string; owner: string }>();
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length >= 2 && /^\d+$/.test(f[0]!)) m.set(Number(f[0]), { mask: f[1]!, owner: f[2] ?? '' });
  }
  return m;
}

/** The IRQs boot 1's apply changed, from its journal. */
function journaledIrqs(journal: string): number[] {
  const out = new Set<number>();
  for (const m of journal.matchAll(/"target": "\/proc\/irq\/(\d+)"/g)) out.add(Number(m[1]));
  return [...out].sort((a, b) => a - b);
}

describe('a rollback after a reboot: the same state directory, another boot, devices in another order', () => {
  const dir = mkdtempSync(join(tmpdir(), 'isolate-reboot-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const image = join(dir, 'state.img');
  const stateDisk = (slot: number) => [
    '-drive',
    `file=${image},if=none,id=state,format=raw`,
    '-device',
    `virtio-blk-pci,drive=state,serial=isolate-state,addr=${slot}`,
  ];
  const common = {
    layout: LAYOUTS.twoSocketSmt2,
    includeProject: true,
    standin: true,
    policy: POLICY,
    kernelModules: ['virtio_pci', 'virtio_blk'],
    timeoutMs: 600_000,
  };
  const boot1 = vmScenario('reboot-1', () => {
    const fd = openSync(image, 'w');
    ftruncateSync(fd, 16 * 1024 * 1024);
    closeSync(fd);
    return { ...common, script: BOOT1, extraQemuArgs: stateDisk(6) };
  });
  // The other disk on slot 5: probed first, it becomes virtio0 and takes the IRQs the state disk had.
  const boot2 = vmScenario('reboot-2', () => {
    const other = join(dir, 'other.img');
    const fd = openSync(other, 'w');
    ftruncateSync(fd, 16 * 1024 * 1024);
    closeSync(fd);
    return {
      ...common,
      script: BOOT2,
      extraQemuArgs: [
        '-drive',
        `file=${other},if=none,id=other,format=raw`,
        '-device',
        'virtio-blk-pci,drive=other,serial=other-disk,addr=5',
        ...stateDisk(6),
      ],
    };
  });

  it('boot 1 applies with quiet IRQs and saves the state directory', () => {
    expect(boot1.s('boot1-apply-rc').trim(), boot1.s('boot1-apply')).toBe('0');
    expect(journaledIrqs(boot1.need('boot1-journal')).length, boot1.s('boot1-journal')).toBeGreaterThan(0);
    expect(boot1.s('boot1-saved')).toMatch(/^rc=0$/m);
  });

  it('boot 2 is another boot, and a device that was not there owns IRQs the state disk had', () => {
    expect(boot2.need('boot2-id').trim()).not.toBe(boot1.need('boot1-id').trim());
    expect(boot2.s('boot2-restored')).toMatch(/journal\.json/);
    const before = irqTable(boot1.need('boot1-irqs-before'));
    const now = irqTable(boot2.need('boot2-irqs-before'));
    const moved = journaledIrqs(boot1.s('boot1-journal')).filter(
      (n) => before.get(n)?.owner !== now.get(n)?.owner,
    );
    expect(
      moved.length,
      `${boot1.s('boot1-irqs-before')}\n---\n${boot2.s('boot2-irqs-before')}`,
    ).toBeGreaterThan(0);
  });

  it('the rollback restores the IRQs still owned as journaled, names and leaves the others, exits 0', () => {
    const out = boot2.s('boot2-rollback');
    expect(boot2.s('boot2-rollback-rc').trim(), out).toBe('0');
    const before1 = irqTable(boot1.s('boot1-irqs-before'));
    const before2 = irqTable(boot2.s('boot2-irqs-before'));
    const after = irqTable(boot2.need('boot2-irqs-after'));
    const sameOwner: number[] = [];
    for (const n of journaledIrqs(boot1.s('boot1-journal'))) {
      const was = before1.get(n);
      const is = before2.get(n);
      if (!was || !is) continue;
      if (was.owner === is.owner) {
        sameOwner.push(n);
        // The same object: back to what it had before isolate (unless the kernel refused it: named).
        if (after.get(n)?.mask !== was.mask)
          expect(out, `IRQ ${n}`).toMatch(new RegExp(`(IRQ |/proc/irq/)${n}\\b`));
      } else {
        // Another device's IRQ now: boot 2's own mask stays, and the rollback says why.
        expect(after.get(n)?.mask, `IRQ ${n}: ${was.owner} then, ${is.owner} now\n${out}`).toBe(is.mask);
        expect(out, `IRQ ${n}`).toMatch(new RegExp(`IRQ ${n} is no longer the one isolate changed`));
      }
    }
    expect(sameOwner.length, out).toBeGreaterThan(0);
  });

  it("the rollback skips boot 1's processes and names them, and changes no cgroup file of boot 2", () => {
    const out = boot2.s('boot2-rollback');
    expect(out).toMatch(/written in boot [0-9a-f-]+, host is now in boot [0-9a-f-]+: process \d+ .*skipped/);
    expect(snapDiff(boot2.s('boot2-before-snap'), boot2.need('boot2-after-snap'))).toEqual([]);
  });

  it('--dry-run shows the live masks of boot 2, marked as changed since isolate wrote them', () => {
    const dry = boot2.s('boot2-dry');
    expect(boot2.s('boot2-dry-rc').trim(), dry).toBe('0');
    const marked = dry
      .split('\n')
      .filter((l) => /\/proc\/irq\/\d+/.test(l) && /changed since isolate wrote/.test(l));
    expect(marked.length, dry).toBeGreaterThan(0);
  });

  it('a second rollback has nothing to do; apply and rollback then work as on any host', () => {
    expect(boot2.s('boot2-rollback-again-rc').trim(), boot2.s('boot2-rollback-again')).toBe('0');
    expect(boot2.s('boot2-rollback-again')).toMatch(/nothing to roll back/i);
    expect(boot2.s('boot2-apply-rc').trim(), boot2.s('boot2-apply')).toBe('0');
    expect(boot2.s('boot2-rollback-last-rc').trim(), boot2.s('boot2-rollback-last')).toBe('0');
    expect(snapDiff(boot2.s('boot2-before-snap'), boot2.need('boot2-last-snap'))).toEqual([]);
  });
});
