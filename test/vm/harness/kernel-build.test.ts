// The check that a built kernel has what its fragment asks for: Kconfig silently drops an option whose
// dependencies are off, and a guest kernel without, say, NUMA would boot and prove the wrong thing.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fragmentNotHonoured, IOLATENCY_FRAGMENT } from './kernel-build.js';

describe('fragmentNotHonoured', () => {
  const fragment = [
    '# a comment',
    'CONFIG_NUMA=y',
    'CONFIG_LOCALVERSION="-x"',
    '# CONFIG_MODULES is not set',
    '# CONFIG_DEBUG_INFO is not set',
    '',
  ].join('\n');

  it('passes a config that holds every line', () => {
    const config = 'CONFIG_NUMA=y\nCONFIG_LOCALVERSION="-x"\n# CONFIG_MODULES is not set\n';
    expect(fragmentNotHonoured(fragment, config)).toEqual([]);
  });

  it('names an option Kconfig dropped, one with another value, and one that should be off but is on', () => {
    const config = '# CONFIG_NUMA is not set\nCONFIG_LOCALVERSION=""\nCONFIG_MODULES=y\n';
    expect(fragmentNotHonoured(fragment, config)).toEqual([
      'CONFIG_NUMA=y',
      'CONFIG_LOCALVERSION="-x"',
      '# CONFIG_MODULES is not set',
    ]);
  });

  it('the committed fragment asks for io.latency and builds no modules', () => {
    const f = readFileSync(IOLATENCY_FRAGMENT, 'utf8');
    expect(f).toMatch(/^CONFIG_BLK_CGROUP_IOLATENCY=y$/m);
    expect(f).toMatch(/^# CONFIG_MODULES is not set$/m);
    expect(f).toMatch(/^CONFIG_DEBUG_INFO_NONE=y$/m);
  });
});
