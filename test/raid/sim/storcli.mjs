#!/usr/bin/env node
// storcli/perccli simulator: answers `/call show all J`, `/cN show all J`, `/cN/cv|bbu show all J`
// with real captures (patched with the simulated state) and accepts the real set syntax
// `/cN/vM set wrcache=WB|WT|AWB|rdcache=RA|NoRA|iopolicy=Cached|Direct|pdcache=On|Off|Default J`.
// Unknown syntax gets what storcli prints for it: Status Failure with exit status 0 ([R23]).
import { capture, saveState, simulate, vendorLog } from './lib.mjs';

const family = process.env.RAID_SIM_FAMILY ?? 'storcli';

simulate(family, (args, state) => {
  // Like storcli: without `nolog` every call appends to storcli.log in the working directory.
  if (!args.includes('nolog')) vendorLog(`${family}.log`, args.join(' '));
  const words = args.filter((a) => !/^(J|j|nolog)$/.test(a));
  const json = args.some((a) => a === 'J' || a === 'j');
  if (!json) return failure(null, 'this simulator only speaks JSON (J)');
  const [path, verb, ...rest] = words;
  if (state.controllers.length === 0) {
    // "No Controller found" (perccli/phe-perccli-no-controller.json).
    return {
      stdout: capture(state, state.noController ?? 'perccli/phe-perccli-no-controller.json'),
      code: 0,
    };
  }
  const isShowAll = verb === 'show' && rest.join(' ') === 'all';
  let m = /^\/c(\d+)$/.exec(path ?? '');
  if (isShowAll && (path === '/call' || m)) {
    const indexes = path === '/call' ? state.controllers.map((_, i) => i) : [Number(m[1])];
    if (indexes.some((i) => !state.controllers[i]))
      return failure(Number(m[1]), `Controller ${m[1]} not found`);
    const entries = indexes.map((i) => showAll(state, i));
    return { stdout: JSON.stringify({ Controllers: entries }, null, '\t'), code: 0 };
  }
  m = /^\/c(\d+)\/(cv|bbu)$/.exec(path ?? '');
  if (m && isShowAll) {
    const c = state.controllers[Number(m[1])];
    if (!c) return failure(Number(m[1]), `Controller ${m[1]} not found`);
    const rel = c[m[2]];
    if (!rel) return failure(Number(m[1]), 'Un-supported command');
    const doc = rel.endsWith('.txt') ? bbuFromMegacli(state, c, rel) : JSON.parse(capture(state, rel));
    const entry = doc.Controllers[0];
    entry['Command Status'].Controller = Number(m[1]);
    if (m[2] === 'cv' && c.cvState) setProperty(entry['Response Data']?.Cachevault_Info, 'State', c.cvState);
    if (m[2] === 'cv' && c.cvReplacement)
      setProperty(entry['Response Data']?.Firmware_Status, 'Replacement required', c.cvReplacement);
    return { stdout: JSON.stringify(doc, null, '\t'), code: 0 };
  }
  m = /^\/c(\d+)\/v(\d+)$/.exec(path ?? '');
  if (m && verb === 'set' && rest.length === 1) {
    const ci = Number(m[1]);
    const c = state.controllers[ci];
    if (!c) return failure(ci, `Controller ${ci} not found`);
    const vd = m[2];
    const cache = c.cache?.[vd] ?? vdRow(state, ci, vd)?.Cache;
    if (!cache) return failure(ci, `VD ${vd} not found`);
    const parts = /^(NR|R)(AWB|WB|WT)(C|D)$/.exec(cache);
    const [key, value] = rest[0].split('=');
    // e.g. pdcache on an SSD VD: "Failure" with exit status 0, "SSD Pd is present" (libstoragemgmt [R7]).
    if (state.refuse?.[key]) return failure(ci, state.refuse[key]);
    const v = (value ?? '').toUpperCase();
    const next = parts.slice(1);
    if (key === 'wrcache' && ['WB', 'WT', 'AWB'].includes(v)) next[1] = v;
    else if (key === 'rdcache' && (v === 'RA' || v === 'NORA')) next[0] = v === 'RA' ? 'R' : 'NR';
    else if (key === 'iopolicy' && (v === 'CACHED' || v === 'DIRECT')) next[2] = v === 'CACHED' ? 'C' : 'D';
    else if (key === 'pdcache' && ['ON', 'OFF', 'DEFAULT'].includes(v)) {
      c.pdc = { ...(c.pdc ?? {}), [vd]: { ON: 'enbl', OFF: 'dsbl', DEFAULT: 'dflt' }[v] };
    } else return failure(ci, 'Un-supported command');
    c.cache = { ...(c.cache ?? {}), [vd]: next.join('') };
    saveState(family, state);
    // Shape of a mutating command's verdict: Command Status only (pystorcli2-v1_del_J-success.json).
    const doc = JSON.parse(capture(state, 'storcli/pystorcli2-v1_del_J-success.json'));
    doc.Controllers[0]['Command Status'].Controller = ci;
    doc.Controllers[0]['Command Status'].Description = 'None';
    return { stdout: JSON.stringify(doc, null, 4), code: 0 };
  }
  return failure(null, 'Un-supported command');
});

function showAll(state, i) {
  const c = state.controllers[i];
  const doc = JSON.parse(capture(state, c.showAll));
  const entry = doc.Controllers[0];
  entry['Command Status'].Controller = i;
  const data = entry['Response Data'];
  if (data.Basics) data.Basics.Controller = i;
  for (const row of data['VD LIST'] ?? []) {
    const vd = row['DG/VD'].split('/')[1];
    if (c.cache?.[vd]) row.Cache = c.cache[vd];
    const dg = row['DG/VD'].split('/')[0];
    if (c.pdc?.[vd]) for (const t of data.TOPOLOGY ?? []) if (String(t.DG) === dg) t.PDC = c.pdc[vd];
  }
  if (c.bbuState && data.BBU_Info?.[0]) data.BBU_Info[0].State = c.bbuState;
  if (c.cvState && data.Cachevault_Info?.[0]) data.Cachevault_Info[0].State = c.cvState;
  if (c.bbuStatus !== undefined && data.Status) data.Status['BBU Status'] = c.bbuStatus;
  return entry;
}

/**
 * `/cN/bbu show all J` for a BBU card. No real capture of a successful one exists in the fixtures, so
 * this builds the documented shape (Property/Value lists `BBU_Info`, `BBU_Firmware_Status`,
 * `GasGaugeStatus`; raid-cli.md §3.3 [R7][R17a]) from a real MegaCli -AdpBbuCmd capture, whose
 * firmware fields are the same firmware's. `bbuFlags` / `bbuState` patch it per scenario.
 */
function bbuFromMegacli(state, c, rel) {
  const sections = { BBU_Info: [], BBU_Firmware_Status: [], GasGaugeStatus: [] };
  let section = 'BBU_Info';
  for (const raw of capture(state, rel).replace(/\r/g, '').split('\n')) {
    const line = raw.replace(/\t/g, ' ');
    if (/^BBU Firmware Status\s*:\s*$/.test(line.trim())) section = 'BBU_Firmware_Status';
    else if (/^(GasGuageStatus|BBU GasGauge Status)/.test(line.trim())) section = 'GasGaugeStatus';
    else if (/^BBU \w+ Info for Adapter/.test(line.trim()) || /^Exit Code/.test(line.trim())) section = null;
    if (!section) continue;
    const i = line.indexOf(':');
    if (i <= 0 || line.trim().endsWith(':')) continue;
    const key = line.slice(0, i).trim();
    const value = line.slice(i + 1).trim();
    if (key === '' || /BBU status for Adapter|GasGauge Status/i.test(key)) continue;
    sections[section].push({ Property: key === 'BatteryType' ? 'Type' : key, Value: value });
  }
  for (const row of sections.BBU_Info)
    if (/^Battery State$/i.test(row.Property) && c.bbuState) row.Value = c.bbuState;
  for (const [property, value] of Object.entries(c.bbuFlags ?? {})) {
    const row = sections.BBU_Firmware_Status.find((r) => r.Property === property);
    if (row) row.Value = value;
    else sections.BBU_Firmware_Status.push({ Property: property, Value: value });
  }
  return {
    Controllers: [
      {
        'Command Status': {
          'CLI Version': '007.2807.0000.0000 Dec 22, 2023',
          'Operating system': 'Linux',
          Controller: 0,
          Status: 'Success',
          Description: 'None',
        },
        'Response Data': sections,
      },
    ],
  };
}

function vdRow(state, ci, vd) {
  const data = JSON.parse(capture(state, state.controllers[ci].showAll)).Controllers[0]['Response Data'];
  return (data['VD LIST'] ?? []).find((r) => r['DG/VD'].split('/')[1] === vd);
}

function setProperty(list, property, value) {
  for (const row of list ?? []) if (row.Property === property) row.Value = value;
}

function failure(controller, description) {
  const status = {
    'CLI Version': '007.2807.0000.0000 Dec 22, 2023',
    'Operating system': 'Linux',
    Status: 'Failure',
    Description: description,
  };
  if (controller !== null) status.Controller = controller;
  // Exit status 0 although the command failed: storcli really does this ([R23], raid-cli.md §3.5).
  return { stdout: JSON.stringify({ Controllers: [{ 'Command Status': status }] }, null, '\t'), code: 0 };
}
