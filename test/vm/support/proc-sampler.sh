# Sourced by a guest scenario (bash): sampler() writes one line a sample of the allowed CPUs of the
# threads of the processes in $KS (Kafka's /proc/PID/task/*/status glob) and $YS (YARN's), every 100 ms
# until /root/stop-sampling exists:
#   s N EPOCH-SECONDS kafka=CPUS:THREADS ... yarn=CPUS:THREADS ...
# $K is Kafka's PID. Bash builtins only (mapfile, read -t on a pipe nobody writes as the sleep): a fork
# and an exec per sample would cost more than the interval under TCG. Samples are due every 100 ms from
# the first (the sleep is what is left of the interval); a late one moves the schedule, never bursts.
sampler() {
  local n=0 f l who key out t lines pause next now wait
  local -A c
  exec {pause}<> <(:)
  next=${EPOCHREALTIME/./}
  while [ ! -e /root/stop-sampling ]; do
    n=$((n + 1))
    t=$EPOCHREALTIME
    c=()
    for f in $KS $YS; do
      [[ $f == /proc/$K/* ]] && who=kafka || who=yarn
      mapfile -t lines < "$f" 2> /dev/null || continue
      for l in "${lines[@]}"; do
        if [[ $l == Cpus_allowed_list:* ]]; then
          key="$who=${l##*[[:space:]]}"
          c[$key]=$((${c[$key]:-0} + 1))
          break
        fi
      done
    done
    out="s $n $t"
    for key in "${!c[@]}"; do out+=" $key:${c[$key]}"; done
    echo "$out"
    now=${EPOCHREALTIME/./}
    next=$((next + 100000))
    ((next < now)) && next=$now
    wait=$((next - now))
    if ((wait > 0)); then
      printf -v wait '0.%06d' "$wait"
      read -r -t "$wait" -u "$pause"
    fi
  done
}
