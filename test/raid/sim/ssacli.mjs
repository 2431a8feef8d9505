#!/usr/bin/env node
// ssacli simulator: replays a real `ctrl all show config detail` capture with LD Caching, No-Battery
// Write Cache, battery status and drive write cache patched from the state, and accepts
// `ctrl slot=N ld M modify caching=|aa=|arrayaccelerator=enable|disable [forced]` and
// `ctrl slot=N modify nobatterywritecache=|nbwc=|drivewritecache=|dwc=enable|disable [forced]`
// (raid-cli.md §5). Errors are `Error: ...` lines with a non-zero exit, like the real tool.
import { capture, saveState, simulate } from './lib.mjs';

simulate('ssacli', (rawArgs, state) => {
  const args = rawArgs.filter((a) => a.toLowerCase() !== 'forced');
  if (args[0] !== 'ctrl') return error(`syntax error at "${args[0] ?? ''}"`);
  const slot = args[1];
  const known = state.slots ?? ['slot=0'];
  if (slot !== 'all' && !known.includes(slot))
    return error(`The controller identified by "${slot}" was not detected.`);
  const rest = args.slice(2).join(' ');
  if (rest === 'show config detail' || rest === 'show status') return { stdout: config(state), code: 0 };
  let m = /^ld (\d+) modify (caching|aa|arrayaccelerator)=(enable|disable)$/.exec(rest);
  if (m && slot !== 'all') {
    if (!state.caching[m[1]]) return error(`The specified device does not have logical drive ${m[1]}.`);
    state.caching[m[1]] = m[3] === 'enable' ? 'Enabled' : 'Disabled';
    saveState('ssacli', state);
    return { stdout: '', code: 0 };
  }
  m = /^modify (nobatterywritecache|nbwc|drivewritecache|dwc)=(enable|disable)( usage=configured)?$/.exec(
    rest,
  );
  if (m && slot !== 'all') {
    // Gen10 (per-usage drive write cache policy in the capture) refuses drivewritecache= without
    // usage= (issue 8's report; the refusal text is not in any capture, so this one is generic).
    const gen10 = /Configured Drive Write Cache Policy/.test(capture(state, state.config));
    if ((m[1] === 'drivewritecache' || m[1] === 'dwc') && gen10 && !m[3])
      return error('usage= is required for this controller.');
    if (m[1] === 'nobatterywritecache' || m[1] === 'nbwc')
      state.nbwc = m[2] === 'enable' ? 'Enabled' : 'Disabled';
    else state.dwc = m[2] === 'enable' ? 'Enable' : 'Disable';
    saveState('ssacli', state);
    return { stdout: '', code: 0 };
  }
  return error(`syntax error at "${rest}"`);
});

function config(state) {
  let ld = null;
  return (
    capture(state, state.config)
      .split('\n')
      // A scenario can drop lines the real tool may not print (`dropLines: ["No-Battery Write Cache"]`).
      .filter((line) => !(state.dropLines ?? []).some((d) => line.trim().startsWith(`${d}:`)))
      .map((line) => {
        const head = /^\s*Logical Drive:\s*(\d+)/.exec(line);
        if (head) ld = head[1];
        let m = /^(\s*)Caching:\s+\S+/.exec(line);
        if (m && ld && state.caching[ld]) return `${m[1]}Caching:  ${state.caching[ld]}`;
        m = /^(\s*)No-Battery Write Cache:/.exec(line);
        if (m && state.nbwc) return `${m[1]}No-Battery Write Cache: ${state.nbwc}`;
        m = /^(\s*)Battery\/Capacitor Status:/.exec(line);
        if (m && state.battery) return `${m[1]}Battery/Capacitor Status: ${state.battery}`;
        m = /^(\s*)Cache Status:/.exec(line);
        if (m && state.cacheStatus) return `${m[1]}Cache Status: ${state.cacheStatus}`;
        m = /^(\s*)Configured Drive Write Cache Policy:/.exec(line);
        if (m && state.dwc) return `${m[1]}Configured Drive Write Cache Policy: ${state.dwc}`;
        return line;
      })
      .join('\n')
  );
}

function error(message) {
  return { stdout: `\nError: ${message}\n\n`, code: 1 };
}
