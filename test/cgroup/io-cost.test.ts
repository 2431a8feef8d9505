// io.cost.qos at the cgroup2 root: which devices have iocost enabled, as the kernel prints the file;
// a kernel without the file has no iocost; a file that does not read as the kernel's is unknown.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseIoCostQos, readIoCost } from '../../src/cgroup/io.js';

describe('io.cost.qos', () => {
  it('lists the devices with enable=1', () => {
    expect(
      parseIoCostQos(
        '8:16 enable=0 ctrl=auto rpct=0.00 rlat=250000 wpct=0.00 wlat=250000 min=1.00 max=10000.00\n' +
          '259:0 enable=1 ctrl=user rpct=95.00 rlat=5000 wpct=95.00 wlat=5000 min=50.00 max=150.00\n',
      ),
    ).toEqual(['259:0']);
    expect(parseIoCostQos('')).toEqual([]);
  });

  it('refuses what the kernel does not write', () => {
    expect(parseIoCostQos('259:0 enabled\n')).toBeNull();
    expect(parseIoCostQos('sda enable=1\n')).toBeNull();
    expect(parseIoCostQos('8:0 ctrl=auto\n')).toBeNull();
  });

  it('reads the file under the root: absent is unsupported, garbage unknown', () => {
    const root = mkdtempSync(join(tmpdir(), 'isolate-iocost-'));
    mkdirSync(join(root, 'sys/fs/cgroup'), { recursive: true });
    expect(readIoCost(root, 'sys/fs/cgroup')).toEqual({
      iocost: 'unsupported',
      iocostFile: '/sys/fs/cgroup/io.cost.qos',
    });
    writeFileSync(join(root, 'sys/fs/cgroup/io.cost.qos'), '8:0 enable=1 ctrl=auto\n');
    expect(readIoCost(root, 'sys/fs/cgroup').iocost).toEqual({ enabled: ['8:0'] });
    writeFileSync(join(root, 'sys/fs/cgroup/io.cost.qos'), '\u0000\u0001garbage\n');
    expect(readIoCost(root, 'sys/fs/cgroup').iocost).toBe('unknown');
  });
});
