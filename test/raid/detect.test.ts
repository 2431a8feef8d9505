// Software RAID (/proc/mdstat) and lspci captures: what isolate concludes about controller cache.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyLspci, parseMdstat, scsiHosts } from '../../src/raid/detect.js';
import { findTool, parseToolPaths } from '../../src/raid/tools.js';
import { allFixtures, fixture, HAVE_FIXTURES } from './fixtures.js';

/** name, level, degraded, operation — read from each capture. */
const MDSTAT: Record<string, [string, string | null, boolean, string | null][]> = {
  // md4/md3/md0/md2 raid1 [UU], md1 raid0.
  'mdadm/check_raid-mdstat-centos6.txt': [
    ['md4', 'raid1', false, null],
    ['md3', 'raid1', false, null],
    ['md0', 'raid1', false, null],
    ['md1', 'raid0', false, null],
    ['md2', 'raid1', false, null],
  ],
  // "md0 : active raid5 sdc1[3](F) ..." "[3/2] [U_U]".
  'mdadm/check_raid-mdstat-failed.txt': [['md0', 'raid5', true, null]],
  // "Personalities : " only.
  'mdadm/check_raid-mdstat-none.txt': [],
  'mdadm/check_raid-mdstat-raid0.txt': [['md2', 'raid0', false, null]],
  // "[6/4] [UUUU__]" "recovery = 19.6%".
  'mdadm/check_raid-mdstat-recovery.txt': [['md0', 'raid6', true, 'recovery']],
  // md2 and md1 "resync =".
  'mdadm/check_raid-mdstat-resync.txt': [
    ['md0', 'raid1', false, null],
    ['md2', 'raid1', false, 'resync'],
    ['md1', 'raid1', false, 'resync'],
  ],
};

/** kind of each RAID/SAS line, in order. */
const LSPCI: Record<string, string[]> = {
  'detect/glpi-lspci-nn-intel-rst-raid-mode.txt': ['software-raid'], // [8086:282a] "SATA Controller [RAID mode]"
  'detect/glpi-lspci-nn-intel-vmd.txt': ['software-raid'], // [8086:9a0b] "Volume Management Device NVMe RAID"
  'detect/percona-lspci-adaptec-aacraid.txt': ['caching-raid'], // "Adaptec AAC-RAID"
  'detect/percona-lspci-hp-smart-array.txt': ['caching-raid', 'caching-raid'], // two "Smart Array" lines
  'detect/percona-lspci-megaraid-1078.txt': ['caching-raid'], // "MegaRAID SAS 1078"
  'detect/percona-lspci-megaraid-2208.txt': ['caching-raid'], // "MegaRAID SAS 2208 [Thunderbolt]"
  'detect/percona-lspci-sas1068e-hba.txt': ['hba'], // "SAS1068E PCI-Express Fusion-MPT SAS"
};

describe.skipIf(!HAVE_FIXTURES)('software RAID and lspci captures', () => {
  it('every mdadm/ and detect/ capture has expectations', () => {
    const files = allFixtures().filter((f) => f.startsWith('mdadm/') || f.startsWith('detect/'));
    expect(files.sort()).toEqual([...Object.keys(MDSTAT), ...Object.keys(LSPCI)].sort());
  });

  for (const [file, arrays] of Object.entries(MDSTAT)) {
    it(file, () => {
      expect(parseMdstat(fixture(file)).map((a) => [a.name, a.level, a.degraded, a.operation])).toEqual(
        arrays,
      );
    });
  }

  for (const [file, kinds] of Object.entries(LSPCI)) {
    it(file, () => {
      const found = classifyLspci(fixture(file));
      expect(found.map((f) => f.kind)).toEqual(kinds);
      if (file.includes('megaraid')) expect(found[0]?.tools).toEqual(['storcli', 'perccli', 'megacli']);
      if (file.includes('aacraid')) expect(found[0]?.tools).toEqual(['arcconf']);
    });
  }
});

describe('sysfs and tool lookup under --root', () => {
  it('reads proc_name of each scsi_host, in host order', async () => {
    const root = mkdtempSync(join(tmpdir(), 'isolate-detect-'));
    try {
      for (const [host, name] of [
        ['host10', 'mpt3sas'],
        ['host2', 'megaraid_sas'],
        ['host3', ''],
      ]) {
        mkdirSync(join(root, 'sys/class/scsi_host', host as string), { recursive: true });
        writeFileSync(join(root, 'sys/class/scsi_host', host as string, 'proc_name'), `${name}\n`);
      }
      expect(await scsiHosts(root)).toEqual([
        { host: 'host2', procName: 'megaraid_sas' },
        { host: 'host10', procName: 'mpt3sas' },
      ]);
      expect(await scsiHosts(join(root, 'missing'))).toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('finds tools only at the fixed absolute paths, executable ones only', async () => {
    const root = mkdtempSync(join(tmpdir(), 'isolate-tools-'));
    try {
      mkdirSync(join(root, 'usr/sbin'), { recursive: true });
      mkdirSync(join(root, 'usr/local/bin'), { recursive: true });
      writeFileSync(join(root, 'usr/sbin/ssacli'), '#!/bin/sh\n', { mode: 0o755 });
      writeFileSync(join(root, 'usr/sbin/arcconf'), 'not executable', { mode: 0o644 });
      writeFileSync(join(root, 'usr/local/bin/storcli64'), '#!/bin/sh\n', { mode: 0o755 }); // not a known path
      expect(await findTool('ssacli', root)).toBe(join(root, 'usr/sbin/ssacli'));
      expect(await findTool('arcconf', root)).toBeNull();
      expect(await findTool('storcli', root)).toBeNull();
      expect(() => parseToolPaths(['storcli=relative/path'])).toThrow(/absolute path/);
      expect(parseToolPaths(['ssacli=/opt/x/ssacli'])).toEqual({ ssacli: '/opt/x/ssacli' });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
