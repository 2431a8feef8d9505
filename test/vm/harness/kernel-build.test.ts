// The check that a built kernel has what its fragment asks for: Kconfig silently drops an option whose
// dependencies are off, and a guest kernel without, say, NUMA would boot and prove the wrong thing.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildOrReuse, fragmentNotHonoured, IOLATENCY_FRAGMENT } from './kernel-build.js';

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

// The real build steps up to the check (unpacking Debian's source and tinyconfig: ~20 s), on a fragment
// Kconfig cannot honour: the build fails naming the option, and the cache holds nothing new, neither an
// entry that reads as a kernel nor the build directory.
describe('buildOrReuse', () => {
  it('a fragment Kconfig drops fails the build and leaves nothing in the cache', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'isolate-fragment-'));
    // A cache of its own, holding an entry already: the kernel lane builds into the real one meanwhile.
    const base = join(dir, 'kernel-build');
    mkdirSync(join(base, 'earlier'), { recursive: true });
    try {
      const fragment = join(dir, 'bad.config');
      writeFileSync(fragment, '# no such option\nCONFIG_ISOLATE_NO_SUCH_OPTION=y\n');
      await expect(buildOrReuse(fragment, base)).rejects.toThrow(
        /bad\.config: options the kernel's Kconfig did not keep .*: CONFIG_ISOLATE_NO_SUCH_OPTION=y/,
      );
      expect(readdirSync(base).sort()).toEqual(['earlier']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);
});
