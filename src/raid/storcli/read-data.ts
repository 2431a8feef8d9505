// What one controller's Response Data says, into its facts: model, status, personality, driver,
// cache memory, the battery/CacheVault/Energy Pack sections, the drive groups' disk cache and every
// virtual drive's rows and properties (storcli ≤7.x, storcli2 and their text form alike).
import { getOrCreate, normKey, text } from '../words.js';
import { decodeCacheList, decodeCacheString } from './cache.js';
import { type CtlFacts, type Json, newVdFacts, obj, type VdFacts } from './facts.js';

export function readData(f: CtlFacts, data: Json): void {
  const basics = obj(data.Basics);
  f.model = text(basics?.Model) ?? text(basics?.['Product Name']) ?? text(data['Product Name']) ?? f.model;
  const version = obj(data.Version);
  f.driver = text(version?.['Driver Name']) ?? text(data['Driver Name']) ?? f.driver;
  const status = obj(data.Status);
  if (status) {
    f.status = text(status['Controller Status']) ?? f.status;
    f.personality =
      text(status['Controller Personality']) ?? text(status['Current Personality']) ?? f.personality;
    // `BBU Status` was renamed `Energy Pack Status` (phe-cALL_show_all-MR216i-no-cache-NRWTD.json).
    if ('BBU Status' in status) f.packStatus = status['BBU Status'];
    if ('Energy Pack Status' in status) f.packStatus = status['Energy Pack Status'];
  }
  const hw = obj(data.HwCfg);
  if (hw) {
    f.packHw = text(hw.BBU) ?? text(hw['Energy Pack']) ?? f.packHw;
    f.onBoardMemory =
      text(hw['On Board Memory Size']) ??
      (typeof hw['DDR Memory Size(MiB)'] === 'number' ? `${hw['DDR Memory Size(MiB)']}MiB` : null) ??
      f.onBoardMemory;
  }
  const tasks = obj(data['Scheduled Tasks']);
  if (tasks) f.nextBatteryLearn = text(tasks['Next Battery Learn']) ?? f.nextBatteryLearn;
  readProtection(f, data);
  const topology = data.TOPOLOGY;
  if (Array.isArray(topology)) {
    for (const row of topology as Json[]) {
      // The drive-group row (Arr '-') carries the group's PD cache setting: dflt/dsbl/enbl.
      const dg = text(row.DG);
      const pdc = text(row.PDC);
      if (dg !== null && pdc !== null && row.Arr === '-') f.pdcByDg.set(dg, pdc);
    }
  }
  const vdList = data['VD LIST'];
  if (Array.isArray(vdList)) for (const row of vdList as Json[]) readVdRow(f, row);
  for (const [key, value] of Object.entries(data)) {
    // `/c0/v0` arrays and `VD0 Properties` from `/cx/vall show all` (megaraid-dashboard, puppet).
    if (/^\/c\d+\/v\d+$/.test(key) && Array.isArray(value)) {
      for (const row of value as Json[]) readVdRow(f, row);
    }
    const props = /^VD(\d+) Properties$/.exec(key);
    if (props) readVdProperties(f, props[1] as string, obj(value));
  }
  const vds = data['Virtual Drives'];
  if (Array.isArray(vds)) {
    // storcli2 `vall show all`: [{ "VD Info": {...}, "VD Properties": {...} }] (perccli2-status-H965i-vall.json).
    for (const item of vds as Json[]) {
      const info = obj(item['VD Info']);
      if (!info) continue;
      const vd = readVdRow(f, info);
      if (vd) readVdProperties(f, vd.vd, obj(item['VD Properties']));
    }
  }
}

function readVdRow(f: CtlFacts, row: Json): VdFacts | null {
  const dgvd = text(row['DG/VD']);
  const m = dgvd ? /^(\d+)\/(\d+)$/.exec(dgvd) : null;
  if (!m) return null;
  const vd = vdOf(f, m[2] as string);
  vd.dg = m[1] as string;
  vd.type = text(row.TYPE) ?? vd.type;
  vd.state = text(row.State) ?? vd.state;
  vd.name = text(row.Name) ?? vd.name;
  if ('CurrentCache' in row || 'DefaultCache' in row) {
    f.schema2 = true;
    vd.current = decodeCacheList(row.CurrentCache);
    vd.defaults = decodeCacheList(row.DefaultCache);
  } else if ('Cache' in row) {
    vd.current = decodeCacheString(row.Cache);
  }
  return vd;
}

function readVdProperties(f: CtlFacts, vdNumber: string, props: Json | null): void {
  if (!props) return;
  const vd = vdOf(f, vdNumber);
  vd.initialWrite = text(props['Write Cache(initial setting)']) ?? vd.initialWrite;
  vd.diskCachePolicy =
    text(props['Disk Cache Policy']) ?? text(props['Drive Write Cache Policy']) ?? vd.diskCachePolicy;
  vd.activeOps = text(props['Active Operations']) ?? vd.activeOps;
  vd.osDriveName = text(props['OS Drive Name']) ?? vd.osDriveName;
}

function vdOf(f: CtlFacts, vdNumber: string): VdFacts {
  return getOrCreate(f.vds, vdNumber, () => newVdFacts(vdNumber));
}

/**
 * Battery / CacheVault / Energy Pack. `show all` embeds a one-row table (`BBU_Info`,
 * `Cachevault_Info`: Model, State, Next Learn ...); `/cx/bbu|cv show all` gives Property/Value
 * lists (`Cachevault_Info`, `Firmware_Status`, `Properties`, raid-cli.md §3.3); storcli2 has
 * `Energy Pack Info` rows (§3.6).
 */
function readProtection(f: CtlFacts, data: Json): void {
  // Firmware-status flags share names with gauges ("Temperature: OK" vs "Temperature: 40 C"): keep
  // them apart with a prefix.
  const sections: [string, 'bbu' | 'cachevault' | null, string][] = [
    ['BBU_Info', 'bbu', ''],
    ['Cachevault_Info', 'cachevault', ''],
    ['BBU_Firmware_Status', null, 'fw:'],
    ['Firmware_Status', null, 'fw:'],
    ['Properties', null, ''],
    ['GasGaugeStatus', null, 'gas:'],
    ['BBU_Capacity_Info', null, 'gas:'],
  ];
  for (const [name, kind, prefix] of sections) {
    const rows = data[name];
    if (!Array.isArray(rows) || rows.length === 0) continue;
    if (kind) f.protKind = kind;
    // Property/Value lists are the unit's own `show all` (raid-cli.md §3.3); `show all` of the
    // controller embeds one-row tables instead.
    if (prefix === 'fw:' && rows.some((r) => r && typeof r === 'object' && 'Property' in (r as Json))) {
      f.detailRead = true;
    }
    for (const row of rows as Json[]) {
      if ('Property' in row) {
        const key = text(row.Property);
        const value = text(row.Value);
        if (key && value !== null) f.prot.set(prefix + normKey(key), value);
      } else {
        for (const [k, v] of Object.entries(row)) {
          const value = text(v);
          if (value !== null) f.prot.set(prefix + normKey(k), value);
        }
      }
    }
  }
  const pack = data['Energy Pack Info'];
  if (Array.isArray(pack) && pack.length > 0) {
    const row = pack[0] as Json;
    f.protKind = /batt/i.test(String(row.Type ?? '')) ? 'bbu' : 'cachevault';
    const status = text(row.Status);
    if (status) f.prot.set('state', status);
  }
}
