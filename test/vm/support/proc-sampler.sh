# Sourced by a guest scenario (bash): sampler() writes one line a sample of the allowed CPUs of the
# threads of the processes in $KS (Kafka's /proc/PID/task/*/status glob) and $YS (YARN's), every 100 ms
# until /root/stop-sampling exists:
#   s N EPOCH-SECONDS kafka=CPUS:THREADS ... yarn=CPUS:THREADS ...
# $K is Kafka's PID. Bash builtins only (mapfile, read -t on a pipe nobody writes as the sleep): a fork
# and an exec per sample would cost more than the interval under TCG.
sampler() {
  local n=0 f l who key out t lines pause
  local -A c
  exec {pause}<> <(:)
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
    read -r -t 0.1 -u "$pause"
  done
}
