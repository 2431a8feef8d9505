#!/usr/bin/env node
// Generates test/fixtures/disks/r630-kafka: the block-device side of a Kafka broker host, shaped as
// Debian 12's 6.1 kernel lays it out in /sys and /proc/self/mountinfo, for the disk resolver
// (src/topology/disks.ts). It holds no CPU tree: tests that plan on it copy one beside it (the
// intel-2s-ht-split tree imitates the same Dell R630). Run: node scripts/gen-disk-fixtures.mjs
// The output is committed; rerunning must reproduce it byte for byte.
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'fixtures', 'disks', 'r630-kafka');

function file(rel, text) {
  mkdirSync(dirname(join(ROOT, rel)), { recursive: true });
  writeFileSync(join(ROOT, rel), text);
}
/** A relative symlink at `rel` pointing at `to` (both relative to the tree), as sysfs makes them. */
function link(rel, to) {
  mkdirSync(dirname(join(ROOT, rel)), { recursive: true });
  symlinkSync(relative(dirname(join(ROOT, rel)), join(ROOT, to)), join(ROOT, rel));
}

const PERC_PCI = 'sys/devices/pci0000:00/0000:00:02.0/0000:02:00.0';
const AHCI_PCI = 'sys/devices/pci0000:00/0000:00:1f.2';
const NVME_PCI = 'sys/devices/pci0000:80/0000:80:02.0/0000:83:00.0';

/** A block device directory at `dir` named by its last part, with the class/dev/block links. */
function block(dir, dev, { whole = true, scheduler, rotational } = {}) {
  const name = dir.split('/').at(-1);
  file(`${dir}/dev`, `${dev}\n`);
  file(`${dir}/size`, '7812501504\n');
  mkdirSync(join(ROOT, dir, 'holders'), { recursive: true });
  if (whole) {
    file(`${dir}/queue/scheduler`, `${scheduler}\n`);
    file(`${dir}/queue/rotational`, `${rotational}\n`);
    file(`${dir}/queue/wbt_lat_usec`, rotational ? '75000\n' : '2000\n');
    link(`sys/block/${name}`, dir);
  }
  link(`sys/class/block/${name}`, dir);
  link(`sys/dev/block/${dev}`, dir);
}
function partition(parent, name, dev, n) {
  block(`${parent}/${name}`, dev, { whole: false });
  file(`${parent}/${name}/partition`, `${n}\n`);
}
/** A SCSI host with its driver, and one disk on it. */
function scsiDisk(hostDir, host, target, driver, vendor, model, disk, dev, queue) {
  file(`${hostDir}/scsi_host/${host}/proc_name`, `${driver}\n`);
  link(`sys/class/scsi_host/${host}`, `${hostDir}/scsi_host/${host}`);
  link(`${hostDir}/scsi_host/${host}/device`, hostDir);
  const sdev = `${hostDir}/target${target.split(':').slice(0, 3).join(':')}/${target}`;
  // SCSI INQUIRY strings: vendor padded to 8, model to 16 bytes.
  file(`${sdev}/vendor`, `${vendor.padEnd(8)}\n`);
  file(`${sdev}/model`, `${model.padEnd(16)}\n`);
  const dir = `${sdev}/block/${disk}`;
  block(dir, dev, queue);
  link(`${dir}/device`, sdev);
  return dir;
}

rmSync(ROOT, { recursive: true, force: true });

// PERC H730 Mini (megaraid_sas, node 0): one virtual drive sda on channel 2, as MegaRAID presents
// logical drives; sda1 holds /data1, sda2 the root filesystem.
file(`${PERC_PCI}/numa_node`, '0\n');
const sda = scsiDisk(
  `${PERC_PCI}/host0`,
  'host0',
  '0:2:0:0',
  'megaraid_sas',
  'DELL',
  'PERC H730 Mini',
  'sda',
  '8:0',
  {
    scheduler: '[mq-deadline] kyber bfq none',
    rotational: 1,
  },
);
partition(sda, 'sda1', '8:1', 1);
partition(sda, 'sda2', '8:2', 2);

// Two SATA HDDs on the chipset's AHCI (node 0), one partition each, mirrored by md0; LVM on top.
file(`${AHCI_PCI}/numa_node`, '0\n');
const sdb = scsiDisk(
  `${AHCI_PCI}/ata1/host1`,
  'host1',
  '1:0:0:0',
  'ahci',
  'ATA',
  'ST4000NM0035-1V4',
  'sdb',
  '8:16',
  {
    scheduler: 'mq-deadline kyber [bfq] none',
    rotational: 1,
  },
);
const sdc = scsiDisk(
  `${AHCI_PCI}/ata2/host2`,
  'host2',
  '2:0:0:0',
  'ahci',
  'ATA',
  'ST4000NM0035-1V4',
  'sdc',
  '8:32',
  {
    scheduler: 'mq-deadline kyber [bfq] none',
    rotational: 1,
  },
);
partition(sdb, 'sdb1', '8:17', 1);
partition(sdc, 'sdc1', '8:33', 1);
const md0 = 'sys/devices/virtual/block/md0';
block(md0, '9:0', { scheduler: 'none', rotational: 1 });
file(`${md0}/md/level`, 'raid1\n');
link(`${md0}/slaves/sdb1`, `${sdb}/sdb1`);
link(`${md0}/slaves/sdc1`, `${sdc}/sdc1`);
link(`${sdb}/sdb1/holders/md0`, md0);
link(`${sdc}/sdc1/holders/md0`, md0);
const dm0 = 'sys/devices/virtual/block/dm-0';
block(dm0, '253:0', { scheduler: 'none', rotational: 1 });
file(`${dm0}/dm/name`, 'vg0-kafka\n');
file(`${dm0}/dm/uuid`, 'LVM-Qy3bT0x8cTzXc1YVj5a9yZr2W2bGJrYxk3mO0k2oW1nQeF3Xw0vJ8R6pXo1P2q3R\n');
link(`${dm0}/slaves/md0`, md0);
link(`${md0}/holders/dm-0`, dm0);

// NVMe SSD in the riser served by CPU 2 (node 1); the controller carries numa_node too.
file(`${NVME_PCI}/numa_node`, '1\n');
const nvme = `${NVME_PCI}/nvme/nvme0`;
file(`${nvme}/numa_node`, '1\n');
file(`${nvme}/model`, 'SAMSUNG MZQLB1T9HAJR-00007              \n');
block(`${nvme}/nvme0n1`, '259:0', { scheduler: '[none] mq-deadline', rotational: 0 });
link(`${nvme}/nvme0n1/device`, nvme);

// A loop device holding an image mounted at /images.
const loop0 = 'sys/devices/virtual/block/loop0';
block(loop0, '7:0', { scheduler: '[none] mq-deadline', rotational: 0 });
file(`${loop0}/loop/backing_file`, '/var/lib/images/kafka.img\n');

// The mount table as the kernel prints it: "/data 3" has its space escaped as \040; /srv/kafka is
// a bind mount of /data1's kafka-logs; /scratch is tmpfs; a container's overlay.
file(
  'proc/self/mountinfo',
  [
    '22 1 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw,errors=remount-ro',
    '23 22 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw',
    '24 22 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw',
    '25 22 0:5 / /dev rw,nosuid,relatime shared:2 - devtmpfs udev rw,size=65895316k,nr_inodes=16473829,mode=755,inode64',
    '26 22 0:25 / /run rw,nosuid,nodev,noexec,relatime shared:5 - tmpfs tmpfs rw,size=13183164k,mode=755,inode64',
    '40 22 8:1 / /data1 rw,noatime shared:30 - xfs /dev/sda1 rw,attr2,inode64,logbufs=8,logbsize=32k,noquota',
    '41 22 253:0 / /data2 rw,noatime shared:31 - xfs /dev/mapper/vg0-kafka rw,attr2,inode64,logbufs=8,logbsize=32k,noquota',
    '42 22 259:0 / /data\\0403 rw,noatime shared:32 - ext4 /dev/nvme0n1 rw',
    '43 22 0:45 / /scratch rw,nosuid,nodev shared:33 - tmpfs tmpfs rw,size=1048576k,inode64',
    '44 22 8:1 /kafka-logs /srv/kafka rw,noatime shared:30 - xfs /dev/sda1 rw,attr2,inode64,logbufs=8,logbsize=32k,noquota',
    '45 22 7:0 / /images rw,relatime shared:34 - ext4 /dev/loop0 rw',
    '46 22 0:50 / /var/lib/docker/overlay2/3f1c/merged rw,relatime - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/A:/var/lib/docker/overlay2/l/B,upperdir=/var/lib/docker/overlay2/3f1c/diff,workdir=/var/lib/docker/overlay2/3f1c/work',
    '',
  ].join('\n'),
);

// The directories themselves (with a file each, so git keeps them), and a symlinked log dir.
for (const d of [
  'data1/kafka-logs',
  'data2/kafka-logs',
  'data 3/kafka-logs',
  'srv/kafka',
  'scratch/kafka',
  'images/kafka',
  'var/lib/docker/overlay2/3f1c/merged/kafka',
]) {
  file(`${d}/meta.properties`, 'version=0\n');
}
mkdirSync(join(ROOT, 'var/kafka'), { recursive: true });
symlinkSync('/data 3/kafka-logs', join(ROOT, 'var/kafka/logs'));

file(
  'etc/kafka/server.properties',
  [
    '# Licensed to the Apache Software Foundation (ASF) ...',
    'broker.id=1',
    '! a properties comment may start with "!" too',
    '   # and be indented',
    'listeners = PLAINTEXT://:9092',
    '# log.dirs=/wrong',
    'log.dirs = /data1/kafka-logs,\\',
    '           /data2/kafka-logs , /var/kafka/logs',
    'log.dir=/tmp/kafka-logs',
    'num.partitions:8',
    '',
  ].join('\n'),
);
