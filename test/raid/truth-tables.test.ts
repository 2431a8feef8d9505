// Issue 8: one truth table per tool family, checked word by word. Each row starts from a real
// capture, changes one field (the line quoted in the row), parses it offline and asserts the unit's
// condition, `protection.healthy`, `writeBackSafe` and the severities of the controller's findings.
// Healthy words must stay healthy (MegaCli `Operational`, `Optimal`, arcconf `ZMM Optimal` ...).
// storcli BBU words are checked live (live-safety.test.ts): only `/cN/bbu show all` prints them.
import { describe, expect, it } from 'vitest';
import type { ParseTool, ProtectionCondition, Severity } from '../../src/model/raid.js';
import { parseSaved } from '../../src/raid/offline.js';
import { fixture, HAVE_FIXTURES } from './fixtures.js';

interface Row {
  /** `Label` as printed, and the value put there. */
  field: string;
  value: string;
  condition: ProtectionCondition;
  healthy: boolean | null;
  safe: boolean;
  /** Severities of the findings about the controller itself, sorted, duplicates kept. */
  severities: Severity[];
  critical?: boolean;
}

/** Replace the value of the first `label : value` line at or after `after` (a line that must exist). */
function setField(text: string, label: string, value: string, after = ''): string {
  const start = after === '' ? 0 : text.indexOf(after);
  if (start < 0) throw new Error(`capture has no "${after}"`);
  const head = text.slice(0, start);
  const tail = text.slice(start);
  const re = new RegExp(
    `^([ \\t]*${label.replace(/[.*+?^${}()|[\]\\&/]/g, '\\$&')}[ \\t]*:[ \\t]*)[^\\r\\n]*`,
    'm',
  );
  if (!re.test(tail)) throw new Error(`capture has no "${label}" line after "${after}"`);
  return head + tail.replace(re, (_m, p1: string) => `${p1}${value}`);
}

function judge(tool: ParseTool, texts: string[], controllerId: string) {
  const out = parseSaved(
    tool,
    texts.map((text, i) => ({ text, source: `capture${i}` })),
  );
  const c = out.controllers.find((x) => x.id === controllerId);
  if (!c) throw new Error(`no ${controllerId} in ${out.controllers.map((x) => x.id).join(', ')}`);
  return c;
}

function check(tool: ParseTool, texts: string[], id: string, row: Row): void {
  const c = judge(tool, texts, id);
  expect(c.protection.condition, `${row.field}: ${row.value}`).toBe(row.condition);
  expect(c.protection.healthy).toBe(row.healthy);
  expect(c.writeBackSafe).toBe(row.safe);
  const own = c.findings.filter((f) => f.target === c.id).map((f) => f.severity);
  expect(own.sort()).toEqual([...row.severities].sort());
  if (row.critical !== undefined)
    expect(c.findings.some((f) => f.severity === 'critical')).toBe(row.critical);
  // An unknown word is quoted in the WARNING.
  if (row.condition === 'unknown' && row.severities.includes('warning')) {
    expect(c.findings.map((f) => f.message).join('\n')).toContain(`"${row.field}: ${row.value}"`);
  }
}

describe.skipIf(!HAVE_FIXTURES)('MegaCli -AdpBbuCmd truth table', () => {
  // PERC 6/i adapter (controller health, cache memory) + iBBU08 BBU, no logical drives: only the unit speaks.
  const ADP = 'megacli/percona-AdpAllInfo-PERC6i.txt';
  const BBU = 'megacli/check_raid-issue45-adpbbucmd-ibbu08-optimal.txt';
  const FW = 'BBU Firmware Status:';
  const rows: (Row & { after?: string })[] = [
    {
      field: 'Battery State',
      value: 'Optimal',
      condition: 'healthy',
      healthy: true,
      safe: true,
      severities: [],
    },
    {
      field: 'Battery State',
      value: 'Operational',
      condition: 'healthy',
      healthy: true,
      safe: true,
      severities: [],
    },
    {
      field: 'Battery State',
      value: 'Failed',
      condition: 'unknown',
      healthy: null,
      safe: false,
      severities: ['warning'],
    },
    {
      field: 'Battery State',
      value: 'Discharging',
      condition: 'unknown',
      healthy: null,
      safe: false,
      severities: ['warning'],
    },
    {
      field: 'Charging Status',
      value: 'Charging',
      condition: 'charging',
      healthy: false,
      safe: false,
      severities: ['info'],
      after: FW,
    },
    {
      field: 'Charging Status',
      value: 'Discharging',
      condition: 'unknown',
      healthy: null,
      safe: false,
      severities: ['warning'],
      after: FW,
    },
    {
      field: 'Voltage',
      value: 'High',
      condition: 'degraded',
      healthy: false,
      safe: false,
      severities: ['warning'],
      after: FW,
    },
    {
      field: 'Temperature',
      value: 'High',
      condition: 'degraded',
      healthy: false,
      safe: false,
      severities: ['warning'],
      after: FW,
    },
    {
      field: 'Learn Cycle Requested',
      value: 'Yes',
      condition: 'healthy',
      healthy: true,
      safe: true,
      severities: [],
      after: FW,
    },
    {
      field: 'Learn Cycle Active',
      value: 'Yes',
      condition: 'learning',
      healthy: false,
      safe: false,
      severities: ['info'],
      after: FW,
    },
    {
      field: 'Learn Cycle Status',
      value: 'Failed',
      condition: 'degraded',
      healthy: false,
      safe: false,
      severities: ['warning'],
      after: FW,
    },
    {
      field: 'Learn Cycle Status',
      value: 'Timeout',
      condition: 'unknown',
      healthy: null,
      safe: false,
      severities: ['warning'],
      after: FW,
    },
    {
      field: 'Learn Cycle Timeout',
      value: 'Yes',
      condition: 'degraded',
      healthy: false,
      safe: false,
      severities: ['warning'],
      after: FW,
    },
    {
      field: 'I2c Errors Detected',
      value: 'Yes',
      condition: 'degraded',
      healthy: false,
      safe: false,
      severities: ['warning'],
      after: FW,
    },
    {
      field: 'Battery Pack Missing',
      value: 'Yes',
      condition: 'absent',
      healthy: false,
      safe: false,
      severities: [],
      after: FW,
    },
    {
      field: 'Battery Replacement required',
      value: 'Yes',
      condition: 'replace',
      healthy: false,
      safe: false,
      severities: ['warning'],
      after: FW,
    },
    {
      field: 'Remaining Capacity Low',
      value: 'Yes',
      condition: 'degraded',
      healthy: false,
      safe: false,
      severities: ['warning'],
      after: FW,
    },
    {
      field: 'Periodic Learn Required',
      value: 'Yes',
      condition: 'healthy',
      healthy: true,
      safe: true,
      severities: [],
      after: FW,
    },
    {
      field: 'Transparent Learn',
      value: 'Yes',
      condition: 'healthy',
      healthy: true,
      safe: true,
      severities: [],
      after: FW,
    },
    {
      field: 'No space to cache offload',
      value: 'Yes',
      condition: 'degraded',
      healthy: false,
      safe: false,
      severities: ['warning'],
      after: FW,
    },
    {
      field: 'Pack is about to fail & should be replaced',
      value: 'Yes',
      condition: 'replace',
      healthy: false,
      safe: false,
      severities: ['warning'],
      after: FW,
    },
    {
      field: 'Cache Offload premium feature required',
      value: 'Yes',
      condition: 'degraded',
      healthy: false,
      safe: false,
      severities: ['warning'],
      after: FW,
    },
    {
      field: 'Module microcode update required',
      value: 'Yes',
      condition: 'degraded',
      healthy: false,
      safe: false,
      severities: ['warning'],
      after: FW,
    },
    {
      field: 'Remaining Capacity Low',
      value: 'Maybe',
      condition: 'unknown',
      healthy: null,
      safe: false,
      severities: ['warning'],
      after: FW,
    },
  ];
  it.each(rows)('$field: $value → $condition', (row) => {
    check(
      'megacli',
      [fixture(ADP), setField(fixture(BBU), row.field, row.value, row.after)],
      'megacli:/a0',
      row,
    );
  });

  // Older MegaCli: GasGuageStatus flags and isSOHGood (netdata-AdpBbuCmd-old.txt).
  const OLD = 'megacli/netdata-AdpBbuCmd-old.txt';
  const GAUGE = 'GasGuageStatus:';
  it.each<Row & { after?: string }>([
    { field: 'isSOHGood', value: 'Yes', condition: 'healthy', healthy: true, safe: true, severities: [] },
    {
      field: 'isSOHGood',
      value: 'No',
      condition: 'replace',
      healthy: false,
      safe: false,
      severities: ['warning'],
    },
    {
      field: 'Fully Discharged',
      value: 'Yes',
      condition: 'degraded',
      healthy: false,
      safe: false,
      severities: ['warning'],
      after: GAUGE,
    },
    {
      field: 'Remaining Time Alarm',
      value: 'Yes',
      condition: 'degraded',
      healthy: false,
      safe: false,
      severities: ['warning'],
      after: GAUGE,
    },
    {
      field: 'Over Temperature',
      value: 'Yes',
      condition: 'degraded',
      healthy: false,
      safe: false,
      severities: ['warning'],
      after: GAUGE,
    },
    {
      field: 'Over Charged',
      value: 'Yes',
      condition: 'degraded',
      healthy: false,
      safe: false,
      severities: ['warning'],
      after: GAUGE,
    },
  ])('older format $field: $value → $condition', (row) => {
    check(
      'megacli',
      [fixture(ADP), setField(fixture(OLD), row.field, row.value, row.after)],
      'megacli:/a0',
      row,
    );
  });

  it('an -AdpBbuCmd output cut short (no "Exit Code:") is unknown, never healthy', () => {
    const bbu = fixture(BBU);
    const cut = bbu.slice(0, bbu.indexOf('Learn Cycle Active'));
    const c = judge('megacli', [fixture(ADP), cut], 'megacli:/a0');
    expect(c.protection).toMatchObject({ healthy: null, condition: 'unknown' });
    expect(c.writeBackSafe).toBe(false);
    expect(c.findings.map((f) => `${f.severity}: ${f.message}`)).toContain(
      'unknown: megacli: capture1 does not end with "Exit Code:" (cut short or crashed); its values are unknown',
    );
  });
});

describe.skipIf(!HAVE_FIXTURES)('storcli CacheVault truth table (/c0 show all + /c0/cv show all)', () => {
  const SHOW = 'storcli/megaraid-dashboard-c0_show_all-9270CV.json';
  const CV = 'storcli/megaraid-dashboard-cv_show_all-optimal-transparent-learn.json';
  const setProperty = (section: string, property: string, value: string) => {
    const doc = JSON.parse(fixture(CV));
    const row = doc.Controllers[0]['Response Data'][section].find(
      (r: { Property: string }) => r.Property === property,
    );
    row.Value = value;
    return JSON.stringify(doc);
  };
  // The 9270CV's VD is RWBD (configured self-protecting WB): a bad unit makes the firmware write
  // through, which is INFO for the drive; the unit's own finding carries the severity.
  it.each<Row & { section: string }>([
    {
      section: 'Cachevault_Info',
      field: 'State',
      value: 'Optimal',
      condition: 'healthy',
      healthy: true,
      safe: true,
      severities: [],
    },
    {
      section: 'Cachevault_Info',
      field: 'State',
      value: 'Missing',
      condition: 'absent',
      healthy: false,
      safe: false,
      severities: [],
    },
    {
      section: 'Cachevault_Info',
      field: 'State',
      value: 'Failed',
      condition: 'failed',
      healthy: false,
      safe: false,
      severities: ['warning'],
    },
    {
      section: 'Cachevault_Info',
      field: 'State',
      value: 'Degraded',
      condition: 'degraded',
      healthy: false,
      safe: false,
      severities: ['warning'],
    },
    {
      section: 'Cachevault_Info',
      field: 'State',
      value: 'Degraded (need attention)',
      condition: 'degraded',
      healthy: false,
      safe: false,
      severities: ['warning'],
    },
    {
      section: 'Cachevault_Info',
      field: 'State',
      value: 'unknown',
      condition: 'unknown',
      healthy: null,
      safe: false,
      severities: ['warning'],
    },
    {
      section: 'Firmware_Status',
      field: 'Replacement required',
      value: 'Yes',
      condition: 'replace',
      healthy: false,
      safe: false,
      severities: ['warning'],
    },
    {
      section: 'Firmware_Status',
      field: 'No space to cache offload',
      value: 'Yes',
      condition: 'degraded',
      healthy: false,
      safe: false,
      severities: ['warning'],
    },
    {
      section: 'Firmware_Status',
      field: 'Module microcode update required',
      value: 'Yes',
      condition: 'degraded',
      healthy: false,
      safe: false,
      severities: ['warning'],
    },
  ])('$field: $value → $condition', (row) => {
    check('storcli', [fixture(SHOW), setProperty(row.section, row.field, row.value)], 'storcli:/c0', {
      ...row,
      critical: false,
    });
  });

  it('without its own detail a CacheVault is not judged from the one state word', () => {
    const c = judge('storcli', [fixture(SHOW)], 'storcli:/c0');
    expect(c.protection).toMatchObject({ state: 'Optimal', healthy: null, condition: 'unknown' });
    expect(c.writeBackSafe).toBe(false);
  });
});

describe.skipIf(!HAVE_FIXTURES)('ssacli truth table', () => {
  // P400i: battery "Failed (Replace Batteries)", cache "Temporarily Disabled" (low batteries), LD Caching Enabled.
  const P400 = 'ssacli/netdata-P400i-cache-disabled-battery-failed.txt';
  const withCacheOk = () => setField(fixture(P400), 'Cache Status', 'OK');
  it.each<Row>([
    // Two fields: the capture's cache is disabled because of its battery; with both OK write-back is safe.
    {
      field: 'Battery/Capacitor Status',
      value: 'OK',
      condition: 'healthy',
      healthy: true,
      safe: true,
      severities: [],
    },
    {
      field: 'Battery/Capacitor Status',
      value: 'Recharging',
      condition: 'charging',
      healthy: false,
      safe: false,
      severities: ['info'],
    },
    {
      field: 'Battery/Capacitor Status',
      value: 'Failed (Replace Batteries)',
      condition: 'replace',
      healthy: false,
      safe: false,
      severities: ['warning'],
    },
    {
      field: 'Battery/Capacitor Status',
      value: 'Failed (Replace Capacitors)',
      condition: 'replace',
      healthy: false,
      safe: false,
      severities: ['warning'],
    },
    {
      field: 'Battery/Capacitor Status',
      value: 'Degraded',
      condition: 'unknown',
      healthy: null,
      safe: false,
      severities: ['warning'],
    },
    {
      field: 'Battery/Capacitor Count',
      value: '0',
      condition: 'absent',
      healthy: false,
      safe: false,
      severities: [],
    },
  ])('$field: $value → $condition', (row) => {
    // Count 0 keeps the capture's "Failed" status line: absent wins (no unit to warn about).
    check('ssacli', [setField(withCacheOk(), row.field, row.value)], 'ssacli:slot=0', {
      ...row,
      critical: false,
    });
  });

  it.each<[string, Severity[], boolean]>([
    ['OK', ['warning'], false],
    ['Temporarily Disabled', ['info', 'warning'], false],
    ['Permanently Disabled', ['warning', 'warning'], false],
    ['Not Configured', ['info', 'warning'], false],
    ['Melted', ['warning', 'warning'], false],
  ])('Cache Status %s (capture battery Failed) → findings %j', (status, severities, safe) => {
    const c = judge('ssacli', [setField(fixture(P400), 'Cache Status', status)], 'ssacli:slot=0');
    expect(c.writeBackSafe).toBe(safe);
    expect(
      c.findings
        .filter((f) => f.target === c.id)
        .map((f) => f.severity)
        .sort(),
    ).toEqual(severities);
  });

  it('no "No-Battery Write Cache" line: unknown, write-back not safe', () => {
    const text = withCacheOk()
      .replace('Failed (Replace Batteries)', 'OK')
      .replace(/^.*No-Battery Write Cache:.*\n/m, '');
    const c = judge('ssacli', [text], 'ssacli:slot=0');
    expect(c.logicalDrives[0]?.writeBackIfBadBattery).toBeNull();
    expect(c.writeBackSafe).toBe(false);
  });
});

describe.skipIf(!HAVE_FIXTURES)('arcconf truth tables', () => {
  const BATTERY = 'arcconf/check_raid-2-getconfig-AL-battery-optimal.txt';
  const ZMM = 'arcconf/check_raid-3-getconfig-AL-zmm-optimal.txt';
  const AFM = 'arcconf/check_raid-issue31-afm-ready-mixed-lds.txt';
  // The battery capture has write-back in effect ("Write-cache mode: Enabled (write-back)"), which
  // arcconf reports as what the controller does now: with a bad unit that is CRITICAL. The ZMM and
  // AFM captures configure the unprotected `wb` mode: CRITICAL and never safe whatever the unit says.
  it.each<Row & { file: string }>([
    {
      file: BATTERY,
      field: 'Status',
      value: 'Optimal',
      condition: 'healthy',
      healthy: true,
      safe: true,
      severities: [],
      critical: false,
    },
    {
      file: BATTERY,
      field: 'Status',
      value: 'Failed',
      condition: 'failed',
      healthy: false,
      safe: false,
      severities: ['warning'],
      critical: true,
    },
    {
      file: BATTERY,
      field: 'Status',
      value: 'Not Installed',
      condition: 'absent',
      healthy: false,
      safe: false,
      severities: [],
      critical: true,
    },
    {
      file: BATTERY,
      field: 'Status',
      value: 'Charging',
      condition: 'unknown',
      healthy: null,
      safe: false,
      severities: ['warning'],
      critical: false,
    },
    {
      file: BATTERY,
      field: 'Over temperature',
      value: 'Yes',
      condition: 'degraded',
      healthy: false,
      safe: false,
      severities: ['warning'],
      critical: true,
    },
    {
      file: BATTERY,
      field: 'Capacity remaining',
      value: '12 percent',
      condition: 'degraded',
      healthy: false,
      safe: false,
      severities: ['warning'],
      critical: true,
    },
    {
      file: BATTERY,
      field: 'Capacity remaining',
      value: '50 percent',
      condition: 'healthy',
      healthy: true,
      safe: true,
      severities: [],
      critical: false,
    },
    {
      file: ZMM,
      field: 'Status',
      value: 'ZMM Optimal',
      condition: 'healthy',
      healthy: true,
      safe: false,
      critical: true,
      severities: [],
    },
    {
      file: ZMM,
      field: 'Status',
      value: 'ZMM not installed',
      condition: 'absent',
      healthy: false,
      safe: false,
      critical: true,
      severities: [],
    },
    {
      file: ZMM,
      field: 'Status',
      value: 'ZMM Failed',
      condition: 'unknown',
      healthy: null,
      safe: false,
      critical: true,
      severities: ['warning'],
    },
    {
      file: AFM,
      field: 'Overall Backup Unit Status',
      value: 'Ready',
      condition: 'healthy',
      healthy: true,
      safe: false,
      critical: true,
      severities: [],
    },
    {
      file: AFM,
      field: 'Overall Backup Unit Status',
      value: 'Not Ready',
      condition: 'degraded',
      healthy: false,
      safe: false,
      critical: true,
      severities: ['warning'],
    },
    {
      file: AFM,
      field: 'Overall Backup Unit Status',
      value: 'Not Present',
      condition: 'absent',
      healthy: false,
      safe: false,
      critical: true,
      severities: [],
    },
    {
      file: AFM,
      field: 'Supercap Status',
      value: 'Fatal',
      condition: 'failed',
      healthy: false,
      safe: false,
      critical: true,
      severities: ['warning'],
    },
    {
      file: AFM,
      field: 'Supercap Status',
      value: 'Charging',
      condition: 'unknown',
      healthy: null,
      safe: false,
      critical: true,
      severities: ['warning'],
    },
    {
      file: AFM,
      field: 'Non-Volatile Storage Status',
      value: 'Failed',
      condition: 'unknown',
      healthy: null,
      safe: false,
      critical: true,
      severities: ['warning'],
    },
  ])('$file $field: $value → $condition', (row) => {
    check('arcconf', [setField(fixture(row.file), row.field, row.value)], 'arcconf:1', row);
  });

  it.each<Row>([
    {
      field: 'Backup Power Status',
      value: 'Ok',
      condition: 'healthy',
      healthy: true,
      safe: false,
      severities: ['info'],
    },
    {
      field: 'Backup Power Status',
      value: 'Not Ok',
      condition: 'unknown',
      healthy: null,
      safe: false,
      severities: ['info', 'warning'],
    },
    {
      field: 'Hardware Error',
      value: 'Capacitor Failure',
      condition: 'unknown',
      healthy: null,
      safe: false,
      severities: ['info', 'warning'],
    },
  ])('SmartRAID (read-only) $field: $value → $condition', (row) => {
    const file = 'arcconf/check_raid-arcconf31000-SmartRAID3154-smartpqi.txt';
    check('arcconf', [setField(fixture(file), row.field, row.value)], 'arcconf:1', row);
  });
});
