# The benchmark's arms, run by a POSIX sh (busybox ash in the qemu guest, dash/bash on a real host).
# Results go to stdout between =====BEGIN name===== / =====END name===== markers.
#
# Environment (set by bench/isolation/guest.ts or host.ts):
#   CG        cgroup2 mount           ISOLATE   command that runs the isolate CLI
#   PROBE     probe binary            BATCH     batch binary
#   WORK      scratch dir holding policy-loose.yaml and policy-strict.yaml
#   RATE WARMUP DURATION PROBE_OPTS   probe settings     BATCH_THREADS  empty: one per online CPU
#   ARMS      subset of "alone unisolated isolated strict", in that order
#   NOISE     1: also run a one-thread housekeeping load in /system.slice (the guest has no daemons)
set -u
P=isolate-bench-probe
B=isolate-bench-batch
N=system.slice/isolate-bench-noise.service
BPID=
NPID=
APPLIED=
MADE=

sec() { echo "=====BEGIN $1====="; }
T0=$(date +%s)
# Seconds since start at each step: under TCG the isolate commands, not the probe, take most of the time.
mark() { echo "$(( $(date +%s) - T0 ))s $1" >> "$WORK/marks"; }
endsec() { echo; echo "=====END $1====="; }

cleanup() {
  trap - EXIT INT TERM
  [ -n "$BPID" ] && kill "$BPID" 2>/dev/null
  [ -n "$NPID" ] && kill "$NPID" 2>/dev/null
  wait 2>/dev/null
  if [ -n "$APPLIED" ]; then
    sec cleanup-rollback; $ISOLATE rollback 2>&1; endsec cleanup-rollback
  fi
  # Only the cgroups this run created, once their processes are gone.
  for d in $MADE; do
    # A killed process leaves its cgroup only once it has exited and freed its memory.
    i=0
    while ! rmdir "$CG/$d" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
    [ -d "$CG/$d" ] && echo "arms: could not remove $CG/$d" >&2
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for d in $P $B $N; do
  if [ -e "$CG/$d" ]; then
    echo "arms: $CG/$d already exists; refusing to run (remove it, or find out who made it)" >&2
    exit 3
  fi
done
mkdir "$CG/$P" && MADE="$P" || exit 3
mkdir "$CG/$B" && MADE="$MADE $B" || exit 3

mark start
sec topology; $ISOLATE topology 2>&1; endsec topology
sec topology-json; $ISOLATE topology --json 2>&1; endsec topology-json

# Run a command inside cgroup $1: it is there from its first instruction, as a YARN container is.
# exec: in "in_cg ... &" the background job is then the command itself, so $! is what to kill.
# Call it in a subshell or in the background only: it replaces the shell that runs it.
in_cg() {
  cg=$1
  shift
  exec sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG/$cg" "$@"
}

# What the kernel says each bench cgroup may use during an arm (evidence the plan took effect).
# The noise service sits below system.slice, which is what strict fences.
cpus_of() {
  for d in $P $B ${NPID:+system.slice}; do
    [ -d "$CG/$d" ] || continue
    e=$(cat "$CG/$d/cpuset.cpus.effective" 2>/dev/null || echo "all (no cpuset)")
    p=$(cat "$CG/$d/cpuset.cpus.partition" 2>/dev/null || echo '-')
    echo "/$d cpus=$e partition=$p"
  done
}

run_probe() {
  arm=$1
  sec "cpus-$arm"; cpus_of; endsec "cpus-$arm"
  # shellcheck disable=SC2086  # PROBE_OPTS is a list of options
  (in_cg $P "$PROBE" --label "$arm" --rate "$RATE" --warmup "$WARMUP" --duration "$DURATION" $PROBE_OPTS) \
    > "$WORK/$arm.json" 2> "$WORK/$arm.err"
  rc=$?
  mark "probe $arm done"
  sec "probe-$arm"; cat "$WORK/$arm.json"; endsec "probe-$arm"
  sec "probe-$arm-rc"; echo "$rc"; cat "$WORK/$arm.err"; endsec "probe-$arm-rc"
}

start_batch() {
  [ -n "$BPID" ] && return 0
  if [ "${NOISE:-0}" = 1 ]; then
    mkdir -p "$CG/$N" && MADE="$N $MADE"
    in_cg $N "$BATCH" --threads 1 --label isolate-bench-noise 2>/dev/null &
    NPID=$!
  fi
  # shellcheck disable=SC2086
  in_cg $B "$BATCH" --label isolate-bench-batch ${BATCH_THREADS:+--threads $BATCH_THREADS} \
    2> "$WORK/batch.err" &
  BPID=$!
  sleep 1 # let every thread build its working set before the probe's warm-up starts
  sec batch-info; cat "$WORK/batch.err"; endsec batch-info
}

isolated_arm() {
  arm=$1
  policy=$2
  mark "apply $arm"
  # Set before the apply: an apply interrupted by Ctrl-C is finished off by the rollback in cleanup.
  APPLIED=1
  sec "apply-$arm"; $ISOLATE apply --yes --policy "$policy" 2>&1; rc=$?; endsec "apply-$arm"
  mark "applied $arm"
  sec "apply-$arm-rc"; echo "$rc"; endsec "apply-$arm-rc"
  [ "$rc" = 0 ] || return 0
  run_probe "$arm"
  sec "rollback-$arm"; $ISOLATE rollback 2>&1; rc=$?; endsec "rollback-$arm"
  sec "rollback-$arm-rc"; echo "$rc"; endsec "rollback-$arm-rc"
  [ "$rc" = 0 ] && APPLIED=
  mark "rolled back $arm"
}

for arm in $ARMS; do
  case $arm in
    alone) run_probe alone ;;
    unisolated) start_batch; run_probe unisolated ;;
    isolated) start_batch; isolated_arm isolated "$WORK/policy-loose.yaml" ;;
    strict) start_batch; isolated_arm strict "$WORK/policy-strict.yaml" ;;
    *) echo "arms: unknown arm $arm" >&2; exit 2 ;;
  esac
done
mark done
sec marks; cat "$WORK/marks"; endsec marks
sec arms-done; echo ok; endsec arms-done
