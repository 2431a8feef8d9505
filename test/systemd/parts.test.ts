// The systemd backend's pure parts; the backend itself runs against real systemd in test/vm.
import { describe, expect, it } from 'vitest';
import { runtimeDropIn, sameProperty } from '../../src/systemd/executor.js';
import { parseShow } from '../../src/systemd/systemctl.js';

describe('systemd backend parts', () => {
  it('reads systemctl show blocks per unit', () => {
    const text =
      'Id=kafka.service\nLoadState=loaded\nAllowedCPUs=2-3\n\nId=system.slice\nLoadState=loaded\nAllowedCPUs=\n';
    expect(parseShow(text)).toEqual([
      { Id: 'kafka.service', LoadState: 'loaded', AllowedCPUs: '2-3' },
      { Id: 'system.slice', LoadState: 'loaded', AllowedCPUs: '' },
    ]);
  });

  it('compares property values as systemd means them', () => {
    expect(sameProperty('AllowedCPUs', '2-3', '2,3')).toBe(true);
    expect(sameProperty('AllowedCPUs', '2-3', '2-4')).toBe(false);
    expect(sameProperty('MemoryMax', 'infinity', 'max')).toBe(true);
    expect(sameProperty('MemoryLow', '1073741824', '1073741824')).toBe(true);
    expect(sameProperty('CPUWeight', '[not set]', '')).toBe(true);
    expect(sameProperty('AllowedCPUs', null, '')).toBe(false);
  });

  it('knows where set-property --runtime puts its drop-in', () => {
    expect(runtimeDropIn('kafka.service', 'AllowedCPUs')).toBe(
      '/run/systemd/system.control/kafka.service.d/50-AllowedCPUs.conf',
    );
  });
});
