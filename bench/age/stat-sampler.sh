#!/bin/bash
# bench/age/stat-sampler.sh PERIOD NAME=PID ... : every PERIOD s one line: the time, then for each
# process NAME=utime,stime,rss_kb. utime and stime (clock ticks, /proc/PID/stat) keep a process's
# time across execve and include its ended threads, so a re-exec'd agent (renew.cjs) is counted whole.
per=$1; shift; args=("$@")
while true; do
  line="$(date +%s)"
  for kv in "${args[@]}"; do
    p=${kv#*=}
    [ -r "/proc/$p/stat" ] || continue
    read -ra f <<< "$(cut -d')' -f2- "/proc/$p/stat")"
    line="$line ${kv%=*}=${f[11]},${f[12]},$(awk '/VmRSS/{print $2}' "/proc/$p/status")"
  done
  echo "$line"; sleep "$per"
done
