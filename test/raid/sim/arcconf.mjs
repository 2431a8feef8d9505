#!/usr/bin/env node
// arcconf simulator: LIST / GETCONFIG 1 AL / GETSTATUS 1 from real captures, write-cache lines patched
// from the state, and `SETCACHE 1 LOGICALDRIVE n wbb|wb|wt|ron|roff [noprompt]` (raid-cli.md §6).
// Like the firmware, wbb only caches while the battery/ZMM is Optimal. Success ends with
// "Command completed successfully."; anything else does not.
import { capture, saveState, simulate, vendorLog } from './lib.mjs';

simulate('arcconf', (rawArgs, state) => {
  // arcconf appends to UcliEvt.log in its working directory on every call (no way to turn it off).
  vendorLog('UcliEvt.log', rawArgs.join(' '));
  const args = rawArgs.filter((a) => a.toLowerCase() !== 'noprompt');
  const cmd = (args[0] ?? '').toUpperCase();
  if (cmd === 'LIST' && args.length === 1) return ok(capture(state, state.list));
  if (cmd === 'GETSTATUS' && args[1] === '1' && args.length === 2) return ok(capture(state, state.getstatus));
  if (cmd === 'GETCONFIG' && args[1] === '1' && (args[2] ?? 'AL').toUpperCase() === 'AL')
    return ok(getconfig(state));
  if (
    cmd === 'SETCACHE' &&
    args[1] === '1' &&
    (args[2] ?? '').toUpperCase() === 'LOGICALDRIVE' &&
    args.length === 5
  ) {
    const ld = args[3];
    const mode = args[4].toLowerCase();
    if (!state.ld[ld]) return bad(`Invalid logical device ${ld}.`);
    if (['wbb', 'wb', 'wt'].includes(mode)) state.ld[ld].write = mode;
    else if (mode === 'ron' || mode === 'roff') state.ld[ld].read = mode;
    else return bad(`Invalid cache mode ${args[4]}.`);
    saveState('arcconf', state);
    return ok('Controllers found: 1\n\nCommand completed successfully.\n\n');
  }
  return bad('Invalid command.');
});

function getconfig(state) {
  const text = capture(state, state.getconfig);
  const protectedNow = /Status\s*:\s*(Optimal|ZMM Optimal)/.test(text) && !state.batteryFailed;
  let ld = null;
  return text
    .split('\n')
    .map((line) => {
      const head = /^Logical device number (\d+)/i.exec(line);
      if (head) ld = state.ld[head[1]] ?? null;
      if (state.batteryFailed && /^(\s*Status\s*:\s*)Optimal/.test(line))
        return line.replace('Optimal', 'Failed');
      if (!ld) return line;
      const pad = (label) => `   ${label.padEnd(41)}: `;
      if (/^\s*Write-cache setting\s*:/.test(line)) {
        const setting = {
          wbb: 'Enabled (write-back) when protected by battery',
          wb: 'Enabled (write-back)',
          wt: 'Disabled (write-through)',
        };
        return pad('Write-cache setting') + setting[ld.write];
      }
      if (/^\s*Write-cache mode\s*:/.test(line)) {
        const on = ld.write === 'wb' || (ld.write === 'wbb' && protectedNow);
        return pad('Write-cache mode') + (on ? 'Enabled (write-back)' : 'Disabled (write-through)');
      }
      if (/^\s*Read-cache mode\s*:/.test(line) && ld.read)
        return pad('Read-cache mode') + (ld.read === 'ron' ? 'Enabled' : 'Disabled');
      return line;
    })
    .join('\n');
}

function ok(stdout) {
  return { stdout, code: 0 };
}

function bad(message) {
  return { stdout: `Controllers found: 1\n${message}\n\nCommand aborted.\n`, code: 1 };
}
