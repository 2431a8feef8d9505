// The Kafka stand-in JVM (support/java/kafka/Kafka.java) compiled on the host once per source hash and
// cached under .vm-cache: javac under TCG in the guest takes a minute, on the host a second. The guest
// runs it with Debian's openjdk-17-jre-headless (the rootfs variant JVM_ROOTFS_PACKAGES).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { aptInstall, VmPrereqError } from '../harness/ensure.js';
import { REPO_ROOT, VM_CACHE } from '../harness/paths.js';

/** Debian packages of the guest rootfs variant that runs the JVM. */
export const JVM_ROOTFS_PACKAGES = ['openjdk-17-jre-headless'];

const SRC = join(REPO_ROOT, 'test/vm/support/java/kafka/Kafka.java');
const JAVAC = '/usr/bin/javac';

/** `kafka/Kafka.class`, compiled for Java 17 (the guest's runtime). */
export function kafkaClass(): Buffer {
  const key = createHash('sha256').update(readFileSync(SRC)).digest('hex').slice(0, 12);
  const out = join(VM_CACHE, `java-${key}`);
  const cls = join(out, 'kafka/Kafka.class');
  if (!existsSync(cls)) {
    if (!existsSync(JAVAC)) aptInstall(['openjdk-17-jdk-headless']);
    if (!existsSync(JAVAC))
      throw new VmPrereqError(`${JAVAC} still missing after installing openjdk-17-jdk-headless`);
    const tmp = `${out}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    execFileSync(JAVAC, ['--release', '17', '-d', tmp, SRC], { stdio: 'pipe' });
    rmSync(out, { recursive: true, force: true });
    renameSync(tmp, out);
  }
  return readFileSync(cls);
}
