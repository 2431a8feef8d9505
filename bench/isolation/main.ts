/**
 * `npm run bench:isolation -- --guest` (or `--host-cgroup-root /sys/fs/cgroup` on a real host, with
 * `--io-dir DIR` for the I/O bench too): runs the arms, writes report.txt, report.json and latency.svg
 * (the CPU arms' plot), prints the text report.
 * Exit status: 0 when every arm, CPU and I/O, produced its histograms, 1 otherwise (2 for bad arguments).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../test/vm/harness/paths.js';
import { chooseAccel, hostAccelProbes } from './accel.js';
import { GUEST_LAYOUT, kvmBootTest, runGuestArms } from './guest.js';
import { runHostArms } from './host.js';
import { type Params, parseParams } from './params.js';
import { buildReport, formatText, type Report, type Where } from './report.js';
import { renderSvg } from './svg.js';

export async function main(argv: string[]): Promise<number> {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
  let params: Params;
  try {
    params = parseParams(argv, join(REPO_ROOT, 'bench/isolation/results', stamp));
  } catch (e) {
    process.stderr.write(`bench:isolation: ${(e as Error).message}\n`);
    return 2;
  }
  let where: Where;
  let out: Awaited<ReturnType<typeof runGuestArms>>;
  let ioNotes: string[] | undefined;
  if (params.where.kind === 'guest') {
    const choice = await chooseAccel(params.where.accel, hostAccelProbes(kvmBootTest));
    process.stderr.write(
      `bench:isolation: qemu guest, ${choice.accel} (${choice.reason}); running ${params.arms.join(', ')}\n`,
    );
    where = {
      kind: 'guest',
      accel: choice.accel,
      accelReason: choice.reason,
      emulated: choice.accel === 'tcg',
      detail: `qemu guest (${GUEST_LAYOUT.name}: -smp ${GUEST_LAYOUT.smp}, ${GUEST_LAYOUT.memMiB} MiB, ${GUEST_LAYOUT.kernelArgs}), ${choice.accel.toUpperCase()}: ${choice.reason}`,
    };
    out = await runGuestArms(params, choice.accel);
  } else {
    // A VM's "cores" are whatever its hypervisor claims, and its vCPUs share real ones with others.
    const vm = /^flags\s*:.*\bhypervisor\b/m.test(readFileSync('/proc/cpuinfo', 'utf8'));
    try {
      const host = await runHostArms({ ...params, where: params.where });
      out = host;
      ioNotes = host.io?.plan.notes;
      where = {
        kind: 'host',
        emulated: false,
        detail: `this host, cgroup root ${params.where.cgroupRoot} (${host.layout} layout)${vm ? ' (a virtual machine: its CPUs are vCPUs, its SMT siblings may not be real ones)' : ''}`,
      };
    } catch (e) {
      process.stderr.write(`bench:isolation: ${(e as Error).message}\n`);
      return 1;
    }
  }
  const report = buildReport({
    sections: out.sections,
    params,
    where,
    wallMs: out.wallMs,
    ...(ioNotes ? { ioNotes } : {}),
  });
  writeReport(report, params.outDir);
  process.stdout.write(formatText(report));
  process.stdout.write(`\nwritten: ${params.outDir}/{report.txt,report.json,latency.svg}\n`);
  const failed = [...report.arms, ...(report.io?.arms ?? [])].filter((a) => !a.ok);
  if (failed.length > 0 && !out.sections['arms-done'])
    process.stderr.write(
      `bench:isolation: the arms script stopped early; its last output:\n${out.log.slice(-2000)}\n`,
    );
  return failed.length === 0 ? 0 : 1;
}

export function writeReport(report: Report, dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'report.txt'), formatText(report));
  // One line per histogram bucket instead of five: the buckets are most of the file.
  const json = JSON.stringify(report, null, 2).replace(
    /\[\n\s+(\d+),\n\s+(\d+),\n\s+(\d+)\n\s+\]/g,
    '[$1, $2, $3]',
  );
  writeFileSync(join(dir, 'report.json'), `${json}\n`);
  writeFileSync(join(dir, 'latency.svg'), renderSvg(report));
}
