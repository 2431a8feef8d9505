// Measurement only (bench/age/twin.sh): re-exec this process every RENEW_S s, same PID, a fresh image.
const fs = require('node:fs');
const s = Number(process.env.RENEW_S || 0);
if (s > 0) {
  setTimeout(() => {
    fs.appendFileSync(process.env.RENEW_LOG || '/tmp/renew.log', `${Date.now()} ${process.pid}\n`);
    process.execve(
      process.execPath,
      [process.execPath, ...process.execArgv, ...process.argv.slice(1)],
      process.env,
    );
  }, s * 1000).unref();
}
