// Kafka's disks on Debian's cloud kernel (issue 51), which has no io.latency: a short boot of the
// throttled-HDD guest of support/disks.ts, no measurement windows. `latency: auto` plans no target and
// says why; `latency: 25ms` is refused naming the option. (kafka-disks.test.ts boots the kernel built
// with io.latency.) Apart from it so that it runs among the paired guests: it needs neither that kernel
// nor a quiet machine, and at the end of the run it was 37 s of one core idling beside it (issue 59).
import { beforeAll, describe, expect, it } from 'vitest';
import { diskPolicy as policy, diskScenario } from './support/disks.js';

const CLOUD_ARMS = `
systemctl start kafka.service yarn-batch.service
cp /etc/isolate/policy-weights.yaml /etc/isolate/policy.yaml
run plan isolate plan --verbose
run apply isolate apply --yes
run plan-again isolate plan --verbose
cp /etc/isolate/policy-explicit.yaml /etc/isolate/policy.yaml
run plan-explicit isolate plan --verbose
cp /etc/isolate/policy-weights.yaml /etc/isolate/policy.yaml
run rollback isolate rollback
`;

describe('Kafka’s disks on Debian’s cloud kernel, which has no io.latency', () => {
  const vm = diskScenario('kafka-disks-cloud', CLOUD_ARMS, {
    '/etc/isolate/policy-weights.yaml': policy('weights'),
    '/etc/isolate/policy-explicit.yaml': policy('explicit'),
  });
  const s = vm.need;
  const rc = (n: string) => Number(s(`${n}-rc`).trim());
  const changes = (name: string) => /^Changes[^\n]*\n((?:\s+\d+\.\s.*\n)*)/m.exec(s(name))?.[1] ?? '';

  beforeAll(() => console.log(`kafka-disks-cloud: qemu ${vm.r.durationMs} ms`));

  it('the defaults (latency: auto) plan no latency target, say why, and apply the weights', () => {
    expect(rc('plan'), s('plan')).toBe(0);
    expect(changes('plan')).not.toMatch(/IODeviceLatencyTargetSec|io\.latency/);
    // Before the weights no cgroup has io, and the guest has no /boot/config: nobody can tell.
    expect(s('plan')).toMatch(
      /io kafka: no latency target is planned \(latency: auto\): whether this kernel has io\.latency cannot be told/,
    );
    expect(rc('apply'), s('apply')).toBe(0);
    // Once systemd enabled io down to kafka.service for its weight, that cgroup itself shows it.
    expect(s('plan-again')).toMatch(
      /io kafka: no latency target is planned \(latency: auto\): this kernel has no io\.latency \(\/sys\/fs\/cgroup\/\S+ has io\.\w+ but no io\.latency/,
    );
    expect(s('plan-again')).toMatch(
      /io kafka: vda \(254:0\): io\.weight: BFQ is the active scheduler .*; this kernel has no io\.latency/,
    );
    expect(s('plan') + s('plan-again')).not.toMatch(/io\.latency acts under any scheduler/);
    expect(changes('plan-again')).toBe('');
  });

  it('an explicit target is refused, naming the field, the kernel option and the fix', () => {
    expect(rc('plan-explicit'), s('plan-explicit')).not.toBe(0);
    expect(s('plan-explicit')).toMatch(
      /workloads\[0\]\.io\.latency: this kernel has no io\.latency \(.*\), so no latency target can be set; set latency: off .* CONFIG_BLK_CGROUP_IOLATENCY=y/,
    );
    expect(rc('rollback'), s('rollback')).toBe(0);
  });
});
