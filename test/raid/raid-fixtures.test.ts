// Every real capture in ../shared/fixtures/raid is parsed and checked against values read from it.
import { describe, expect, it } from 'vitest';
import { parseSaved } from '../../src/raid/offline.js';
import { EXPECTED } from './expected.js';
import { allFixtures, fixture, HAVE_FIXTURES } from './fixtures.js';

const NON_VENDOR = ['mdadm/', 'detect/', 'SOURCES.md'];

describe.skipIf(!HAVE_FIXTURES)('vendor captures', () => {
  it('every capture has expectations', () => {
    const covered = new Set(EXPECTED.map((e) => e.file));
    const vendor = allFixtures().filter((f) => !NON_VENDOR.some((p) => f.startsWith(p)));
    expect(vendor.length).toBeGreaterThan(70);
    expect(vendor.filter((f) => !covered.has(f))).toEqual([]);
    expect([...covered].filter((f) => !vendor.includes(f))).toEqual([]);
  });

  for (const e of EXPECTED) {
    it(`${e.file}`, () => {
      const out = parseSaved(e.tool, [{ text: fixture(e.file), source: e.file }]);
      expect(out.controllers.map((c) => c.id)).toEqual(e.controllers.map((c) => c.id));
      e.controllers.forEach((want, i) => {
        const got = out.controllers[i]!;
        if (want.model !== undefined) expect(got.model).toBe(want.model);
        if (want.healthy !== undefined) expect(got.healthy).toBe(want.healthy);
        if (want.mode !== undefined) expect(got.mode).toBe(want.mode);
        if (want.readOnly !== undefined) expect(got.readOnlyReason !== null).toBe(want.readOnly);
        if (want.protection) expect(got.protection).toMatchObject(want.protection);
        const drives = got.logicalDrives.map((d) => [
          d.target,
          d.currentWrite,
          d.defaultWrite,
          d.writeBackIfBadBattery,
        ]);
        expect(drives).toEqual(want.drives);
        if (want.driveFacts) {
          expect(got.logicalDrives.map((d) => [d.name, d.raidLevel, d.state])).toEqual(want.driveFacts);
        }
        expect(got.writeBackSafe).toBe(want.safe);
        expect(got.findings.some((f) => f.severity === 'critical')).toBe(want.critical);
      });
      if (e.host) expect(out.findings.map((f) => f.message).join('\n')).toMatch(e.host);
    });
  }
});
