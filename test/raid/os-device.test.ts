// Which OS disk each logical drive is, from the vendor's own words on real captures: storcli/perccli
// `OS Drive Name` (`/cN/vall show all`), ssacli and arcconf `Disk Name`. Expected names are read off
// the captures (line quoted), not from the parser. Untrusted: only a plain /dev/<kernel name> counts.
import { describe, expect, it } from 'vitest';
import type { ParseTool } from '../../src/model/raid.js';
import { parseSaved } from '../../src/raid/offline.js';
import { osDeviceName } from '../../src/raid/os-device.js';
import { fixture, HAVE_FIXTURES } from './fixtures.js';

const drives = (tool: ParseTool, file: string) =>
  parseSaved(tool, [{ text: fixture(file), source: file }]).controllers.flatMap((c) =>
    c.logicalDrives.map((d) => [d.target, d.osDevice]),
  );

describe.skipIf(!HAVE_FIXTURES)('OS device of each logical drive, on real captures', () => {
  it.each([
    // "/c0/v239" … "VD239 Properties" { … "OS Drive Name" : "/dev/sda" }
    ['perccli', 'perccli/perccli-status-H755-vall_show_all.json', [['perccli:/c0/v239', 'sda']]],
    // perccli2 "Virtual Drives": "DG/VD" : "0/1" … "VD Properties" { "OS Drive Name" : "/dev/sda" }
    ['perccli', 'perccli/perccli2-status-H965i-vall.json', [['perccli2:/c0/v1', 'sda']]],
    // "VD0 Properties": { … "OS Drive Name": "/dev/sda" }
    ['storcli', 'storcli/megaraid-dashboard-vall_show_all-RWBD-cc-running.json', [['storcli:/c0/v0', 'sda']]],
    // "VD0 Properties" { … "OS Drive Name" : "/dev/sdb" }
    ['storcli', 'storcli/puppet-c0_v0_show_all-nvme-raid10-RWBD.json', [['storcli:/c0/v0', 'sdb']]],
    // `/cALL show all` has a VD LIST but no OS Drive Name: unknown, not guessed.
    ['storcli', 'storcli/netdata-megaraid-controllers-info.json', [['storcli:/c0/v0', null]]],
    // "Logical Drive: 1 … Disk Name: /dev/sda"
    ['ssacli', 'ssacli/netdata-P408i-a-Gen10-smartpqi.txt', [['ssacli:slot=0/ld1', 'sda']]],
    // P212 slot 5 LD 1 "/dev/sdc"; P410i slot 0 LD 1 "/dev/sda", LD 2 "/dev/sdb"
    [
      'ssacli',
      'ssacli/netdata-P212_P410i-config-detail.txt',
      [
        ['ssacli:slot=5/ld1', 'sdc'],
        ['ssacli:slot=0/ld1', 'sda'],
        ['ssacli:slot=0/ld2', 'sdb'],
      ],
    ],
    // cciss: "Disk Name: /dev/cciss/c0d0", which sysfs lists as cciss!c0d0
    [
      'ssacli',
      'ssacli/netdata-P400i-cache-disabled-battery-failed.txt',
      [['ssacli:slot=0/ld1', 'cciss!c0d0']],
    ],
    // "Logical Device Number 0 … Disk Name : /dev/sda"
    ['arcconf', 'arcconf/check_raid-issue128-backup-not-present-WT.txt', [['arcconf:1/ld0', 'sda']]],
    [
      'arcconf',
      'arcconf/check_raid-arcconf31000-SmartRAID3154-smartpqi.txt',
      [
        ['arcconf:1/ld0', 'sda'],
        ['arcconf:1/ld1', 'sdb'],
      ],
    ],
    // MegaCli -LDInfo prints no OS name at all.
    ['megacli', 'megacli/check_raid-3-ldinfo-WB.txt', [['megacli:/a0/l0', null]]],
  ] as [ParseTool, string, [string, string | null][]][])('%s %s', (tool, file, want) => {
    expect(drives(tool, file)).toEqual(want);
  });

  it('a name that is not /dev/<disk> is unknown and said, and blocks no cache change', () => {
    const file = 'storcli/megaraid-dashboard-vall_show_all-RWBD-cc-running.json';
    const text = fixture(file).replace('"OS Drive Name": "/dev/sda"', '"OS Drive Name": "/dev/../sda"');
    expect(text).not.toBe(fixture(file));
    const c = parseSaved('storcli', [{ text, source: file }]).controllers[0]!;
    expect(c.logicalDrives[0]!.osDevice).toBeNull();
    expect(c.findings).toContainEqual({
      severity: 'info',
      target: 'storcli:/c0/v0',
      message:
        'storcli:/c0/v0: OS drive name "/dev/../sda" is not a /dev/<disk> name; which disk this drive is stays unknown',
    });
    expect(c.findings.some((f) => f.severity === 'unknown' && /OS drive/.test(f.message))).toBe(false);
  });
});

describe('osDeviceName', () => {
  it.each([
    ['/dev/sda', 'sda'],
    ['  /dev/nvme0n1 ', 'nvme0n1'],
    ['/dev/cciss/c0d0', 'cciss!c0d0'],
    ['/dev/sd-a_1', 'sd-a_1'],
    ['sda', null],
    ['/dev/', null],
    ['/dev/..', null],
    ['/dev/../etc/passwd', null],
    ['/dev/disk/by-id/wwn-0x5000', null],
    ['/dev/mapper/vg0-data', null],
    ['/dev/SDA', null],
    ['/dev/sda\n/dev/sdb', null],
    [`/dev/${'a'.repeat(33)}`, null],
    ['/dev/cciss/../c0d0', null],
    ['', null],
    [null, null],
  ])('%j → %j', (raw, want) => {
    expect(osDeviceName(raw)).toBe(want);
  });
});
