// Measurement only (bench/age/twin.sh): every RECOMPACT_S s a full GC under --stress-compaction, which makes
// about half the old generation's pages evacuation candidates, their objects moved to other pages (32 of
// ~74 pages of an 18 MB test heap, --trace-evacuation-candidates; a plain full GC: none). ~40 ms for the agent.
const fs = require('node:fs');
const v8 = require('node:v8');
const vm = require('node:vm');
const s = Number(process.env.RECOMPACT_S || 0);
if (s > 0) {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  v8.setFlagsFromString('--no-expose-gc');
  setInterval(() => {
    const t = process.cpuUsage();
    v8.setFlagsFromString('--stress-compaction');
    gc();
    v8.setFlagsFromString('--no-stress-compaction');
    const d = process.cpuUsage(t);
    fs.appendFileSync(
      process.env.RECOMPACT_LOG || '/tmp/recompact.log',
      `${Date.now()} ${(d.user + d.system) / 1000}\n`,
    );
  }, s * 1000).unref();
}
