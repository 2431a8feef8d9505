// The two text formats the disk resolver reads: /proc/self/mountinfo (escapes, optional fields,
// bind mounts, stacked mounts) and Java properties (Kafka's server.properties).
import { describe, expect, it } from 'vitest';
import { mountOf, parseMountinfo } from '../../src/topology/mountinfo.js';
import { kafkaLogDirs, parseProperties } from '../../src/topology/properties.js';

describe('mountinfo', () => {
  const mounts = parseMountinfo(
    [
      '22 1 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw',
      '40 22 8:1 / /data1 rw,noatime shared:30 master:2 - xfs /dev/sda1 rw',
      '41 22 8:17 / /data10 rw - xfs /dev/sdb1 rw',
      '42 22 259:0 / /mnt/my\\040disk\\011x rw - ext4 /dev/nvme0n1 rw',
      '43 22 0:45 / /data1 rw - tmpfs tmp\\134fs rw',
      '44 22 8:1 /sub/dir /srv rw - xfs /dev/sda1 rw',
      'garbage line without separator',
      '45 22 x:y / /bad rw - ext4 /dev/sdz rw',
      '',
    ].join('\n'),
  );

  it('reads fields after the optional ones, unescapes octal, skips lines that do not parse', () => {
    expect(mounts.map((m) => [m.dev, m.root, m.point, m.fstype, m.source])).toEqual([
      ['8:2', '/', '/', 'ext4', '/dev/sda2'],
      ['8:1', '/', '/data1', 'xfs', '/dev/sda1'],
      ['8:17', '/', '/data10', 'xfs', '/dev/sdb1'],
      ['259:0', '/', '/mnt/my disk\tx', 'ext4', '/dev/nvme0n1'],
      ['0:45', '/', '/data1', 'tmpfs', 'tmp\\fs'],
      ['8:1', '/sub/dir', '/srv', 'xfs', '/dev/sda1'],
    ]);
  });

  it('picks the longest mount point by whole components, the topmost of stacked mounts', () => {
    expect(mountOf(mounts, '/data10/k')?.dev).toBe('8:17');
    expect(mountOf(mounts, '/data1/k')?.dev).toBe('0:45');
    expect(mountOf(mounts, '/data1')?.dev).toBe('0:45');
    expect(mountOf(mounts, '/data100/k')?.dev).toBe('8:2');
    expect(mountOf(mounts, '/mnt/my disk\tx/kafka')?.dev).toBe('259:0');
    expect(mountOf(mounts, '/srv/kafka')?.root).toBe('/sub/dir');
    expect(mountOf([], '/x')).toBeUndefined();
  });
});

describe('Java properties', () => {
  it('reads separators, comments, continuations and escapes as java.util.Properties does', () => {
    const p = parseProperties(
      [
        '# comment',
        '  ! another = comment',
        'a=1',
        'b : 2',
        'c 3',
        'd\t=\t  4 with spaces  ',
        'e=one,\\',
        '    two,\\',
        '\tthree',
        'f=ends with escaped backslash \\\\',
        'g=next line is its own',
        'key\\ with\\=escapes = v\\u0041\\t',
        'empty',
        'a=overridden',
        'h=\\',
      ].join('\r\n'),
    );
    expect(Object.fromEntries(p)).toEqual({
      a: 'overridden',
      b: '2',
      c: '3',
      d: '4 with spaces  ',
      e: 'one,two,three',
      f: 'ends with escaped backslash \\',
      g: 'next line is its own',
      'key with=escapes': 'vA\t',
      empty: '',
      h: '',
    });
  });

  it('log.dirs (trimmed, empty entries dropped), else log.dir, else the default', () => {
    expect(kafkaLogDirs(parseProperties('log.dir=/x\nlog.dirs= /a , /b,,\n'))).toEqual({
      dirs: ['/a', '/b'],
      key: 'log.dirs',
      defaulted: false,
    });
    expect(kafkaLogDirs(parseProperties('log.dir=/x\n'))).toEqual({
      dirs: ['/x'],
      key: 'log.dir',
      defaulted: false,
    });
    expect(kafkaLogDirs(parseProperties('#log.dirs=/a\n'))).toEqual({
      dirs: ['/tmp/kafka-logs'],
      key: 'log.dir',
      defaulted: true,
    });
    expect(kafkaLogDirs(parseProperties('log.dirs=\n')).dirs).toEqual([]);
  });
});
