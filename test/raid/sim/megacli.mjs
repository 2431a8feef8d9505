#!/usr/bin/env node
// MegaCli simulator: replays real -AdpAllInfo / -LDInfo / -AdpBbuCmd captures for adapter 0, with the
// cache-policy lines and learn state patched from the simulated state, and accepts
// `-LDSetProp WT|WB|ForcedWB|NoCachedBadBBU|CachedBadBBU|RA|NORA|ADRA|Cached|Direct|-EnDskCache|-DisDskCache -Lx|-LAll -ax|-aAll [-NoLog]`
// (syntax from raid-cli.md §4). Like the firmware, WB only becomes the current policy while the BBU is
// Optimal or the drive is CachedBadBBU.
import { capture, saveState, simulate, vendorLog } from './lib.mjs';

simulate('megacli', (rawArgs, state) => {
  // MegaCli logs to MegaSAS.log in the working directory unless told -NoLog.
  if (!rawArgs.some((a) => /^-nolog$/i.test(a))) vendorLog('MegaSAS.log', rawArgs.join(' '));
  const args = rawArgs.filter((a) => !/^-nolog$/i.test(a));
  const adapterArg = args.find((a) => /^-a(\d+|ALL)$/i.test(a));
  if (!adapterArg || !/^-a(0|ALL)$/i.test(adapterArg)) return invalid(adapterArg ?? args.at(-1) ?? '');
  const cmd = args[0]?.toLowerCase();
  if (cmd === '-adpallinfo' && args.length === 2) return ok(capture(state, state.adpAllInfo));
  if (cmd === '-ldinfo' && args.length === 3 && /^-L(all|\d+)$/i.test(args[1])) return ok(ldInfo(state));
  if (cmd === '-adpbbucmd' && args.length === 2) {
    let text = capture(state, state.bbu);
    if (state.learnActive) text = text.replace(/(Learn Cycle Active\s*:\s*)No/, '$1Yes');
    // One field changed per scenario: `bbuField: ["Remaining Capacity Low", "Yes"]`.
    if (state.bbuField) {
      const [key, value] = state.bbuField;
      text = text.replace(
        new RegExp(`^(\\s*${key.replace(/[&()]/g, '\\$&')}\\s*:\\s*).*$`, 'm'),
        `$1${value}`,
      );
    }
    // No BBU: MegaCli 8.07 exits 0x22 with "Get BBU Status Failed." (check_raid-issue32-bbu-absent-exit-0x22.txt).
    return { stdout: text, code: /Exit Code: 0x22/.test(text) ? 0x22 : 0 };
  }
  if (cmd === '-ldsetprop' && args.length === 4) {
    const [, prop, ld] = args;
    if (!/^-L(\d+|all)$/i.test(ld)) return invalid(ld);
    const vds = /^-Lall$/i.test(ld) ? Object.keys(state.vds) : [ld.slice(2)];
    if (vds.some((v) => !state.vds[v])) return invalid(ld);
    const p = prop.toLowerCase();
    for (const v of vds) {
      const vd = state.vds[v];
      if (p === 'wb') vd.write = 'WriteBack';
      else if (p === 'wt') vd.write = 'WriteThrough';
      else if (p === 'forcedwb') {
        vd.write = 'WriteBack';
        vd.badBbu = 'Write Cache OK if Bad BBU';
      } else if (p === 'nocachedbadbbu') vd.badBbu = 'No Write Cache if Bad BBU';
      else if (p === 'cachedbadbbu') vd.badBbu = 'Write Cache OK if Bad BBU';
      else if (p === 'ra') vd.read = 'ReadAhead';
      else if (p === 'nora') vd.read = 'ReadAheadNone';
      else if (p === 'adra') vd.read = 'ReadAdaptive';
      else if (p === 'cached') vd.io = 'Cached';
      else if (p === 'direct') vd.io = 'Direct';
      else if (p === '-endskcache') vd.disk = 'Enabled';
      else if (p === '-disdskcache') vd.disk = 'Disabled';
      else return invalid(prop);
    }
    saveState('megacli', state);
    const lines = vds.map((v) => `Set ${prop} on Adapter 0, VD ${v} (target id: ${v}) success`);
    return ok(`                                     \n${lines.join('\n')}\n\nExit Code: 0x00\n`);
  }
  return invalid(args[0] ?? '');
});

function ldInfo(state) {
  const bbu = capture(state, state.bbu);
  const healthy =
    /Battery State\s*:\s*Optimal/i.test(bbu) &&
    !/Battery Replacement required\s*:\s*Yes/i.test(bbu) &&
    !state.learnActive;
  let vd = null;
  return capture(state, state.ldInfo)
    .split('\n')
    .map((line) => {
      const head = /^Virtual (?:Drive|Disk):\s*(\d+)/i.exec(line);
      if (head) vd = state.vds[head[1]] ?? null;
      if (!vd) return line;
      const policy = /^(Default|Current) Cache Policy:\s*(.*)$/.exec(line);
      if (policy) {
        const [kind] = [policy[1]];
        const cached = vd.badBbu === 'Write Cache OK if Bad BBU';
        const write =
          kind === 'Current' && vd.write === 'WriteBack' && !healthy && !cached ? 'WriteThrough' : vd.write;
        return `${kind} Cache Policy: ${write}, ${vd.read}, ${vd.io}, ${vd.badBbu}`;
      }
      if (/^Disk Cache Policy\s*:/.test(line) && vd.disk) return `Disk Cache Policy   : ${vd.disk}`;
      return line;
    })
    .join('\n');
}

function ok(stdout) {
  return { stdout, code: 0 };
}

function invalid(token) {
  return { stdout: `\nInvalid input at or near token ${token}\n\nExit Code: 0x01\n`, code: 1 };
}
