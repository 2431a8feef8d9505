// io.cost.qos at the cgroup2 root: which devices have iocost enabled, as the kernel prints the file;
// a kernel without the file has no iocost; a file that does not read as the kernel's is unknown.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSays, parseIoCostQos, readIoCost, readIoLatencySupport } from '../../src/cgroup/io.js';

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

describe('io.latency in this kernel', () => {
  const host = () => {
    const root = mkdtempSync(join(tmpdir(), 'isolate-iolat-'));
    mkdirSync(join(root, 'sys/fs/cgroup'), { recursive: true });
    return root;
  };

  it('a top-level cgroup with io enabled shows it; only its files count, not the root', () => {
    const root = host();
    writeFileSync(join(root, 'sys/fs/cgroup/io.stat'), '');
    mkdirSync(join(root, 'sys/fs/cgroup/init.scope'));
    mkdirSync(join(root, 'sys/fs/cgroup/system.slice'));
    writeFileSync(join(root, 'sys/fs/cgroup/system.slice/io.max'), '');
    expect(readIoLatencySupport(root, 'sys/fs/cgroup', null)).toEqual({
      state: 'absent',
      evidence: '/sys/fs/cgroup/system.slice has io.max but no io.latency',
    });
    writeFileSync(join(root, 'sys/fs/cgroup/system.slice/io.latency'), '');
    expect(readIoLatencySupport(root, 'sys/fs/cgroup', null).state).toBe('present');
  });

  it('else the kernel config of the running release; else unknown', () => {
    const root = host();
    expect(readIoLatencySupport(root, 'sys/fs/cgroup', '6.1.0-50-cloud-amd64')).toEqual({
      state: 'unknown',
      evidence: 'no cgroup has io enabled and there is no /boot/config-6.1.0-50-cloud-amd64',
    });
    mkdirSync(join(root, 'boot'));
    writeFileSync(
      join(root, 'boot/config-6.1.0-50-cloud-amd64'),
      '# CONFIG_BLK_CGROUP_IOLATENCY is not set\n',
    );
    expect(readIoLatencySupport(root, 'sys/fs/cgroup', '6.1.0-50-cloud-amd64').state).toBe('absent');
    writeFileSync(
      join(root, 'boot/config-6.1.0-50-amd64'),
      'CONFIG_BLK_CGROUP=y\nCONFIG_BLK_CGROUP_IOLATENCY=y\n',
    );
    expect(readIoLatencySupport(root, 'sys/fs/cgroup', '6.1.0-50-amd64').state).toBe('present');
    // A release that is not one names no file: never a path outside /boot.
    expect(readIoLatencySupport(root, 'sys/fs/cgroup', '../boot/config-6.1.0-50-amd64').state).toBe(
      'unknown',
    );
    expect(readIoLatencySupport(root, 'sys/fs/cgroup', '..').state).toBe('unknown');
  });

  it('a config without the option: absent on a kernel with the io controller (before 4.19), else unknown', () => {
    expect(configSays('CONFIG_BLK_CGROUP=y\n', '/boot/config-4.14').state).toBe('absent');
    expect(configSays('garbage\n', '/boot/config-x').state).toBe('unknown');
    expect(configSays('CONFIG_BLK_CGROUP_IOLATENCY=m\n', '/boot/config-x').state).toBe('unknown');
  });
});
