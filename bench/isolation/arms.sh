# The benchmark's arms, run by a POSIX sh (busybox ash in the qemu guest, dash/bash on a real host).
# Results go to stdout between =====BEGIN name===== / =====END name===== markers.
#
# Environment (set by bench/isolation/guest.ts or host.ts):
#   CG        the hierarchy isolate's cpuset lives in (cgroup2 mount, or v1 cpuset)
#   CG_DIRS   every hierarchy the bench makes its cgroups in (default: CG); a process joins all of them
#   CPUSET_V1 1: CG is a v1 cpuset hierarchy (new cpusets start empty; cpu_exclusive, not partitions)
#   ISOLATE   command that runs the isolate CLI
#   PROBE     probe binary            BATCH     batch binary
#   WORK      scratch dir holding policy-loose.yaml and policy-strict.yaml
#   RATE WARMUP DURATION PROBE_OPTS   probe settings     BATCH_THREADS  empty: one per online CPU
#   ARMS      subset of "alone unisolated isolated strict", in that order (the CPU bench)
#   NOISE     1: also run a one-thread housekeeping load in /system.slice (the guest has no daemons)
# The I/O bench (real host only), when IO_ARMS is not empty:
#   IO_ARMS   subset of "alone unisolated isolated", in that order
#   IO_CG IO_KIND   the hierarchy holding the io controller and its kind (v1: blkio, v2: io)
#   IO_DIR    directory on the disk under test; the bench works in a subdirectory it makes
#   IO_DEVS   MAJ:MIN of the whole disks under IO_DIR
#   APPENDER IOBATCH   binaries; IO_RATE IO_APPEND IO_FSYNC_MS, IO_BATCH_THREADS IO_BATCH_BS_KIB
#   IO_BATCH_FILE_MIB   their settings
#   CAP_SHARE (percent of the batch's unisolated rate) or CAP_WIOPS/CAP_WBPS: the batch's caps
#   IO_ISOLATE_FN   shell text defining io_isolate, which writes the isolated arm's io settings
set -u
P=isolate-bench-probe
B=isolate-bench-batch
N=system.slice/isolate-bench-noise.service
BPID=
NPID=
IOBPID=
IO_WORK=
APPLIED=
MADE=
CG_DIRS=${CG_DIRS:-$CG}
IO_ARMS=${IO_ARMS:-}

sec() { echo "=====BEGIN $1====="; }
T0=$(date +%s)
# Seconds since start at each step: under TCG the isolate commands, not the probe, take most of the time.
mark() { echo "$(( $(date +%s) - T0 ))s $1" >> "$WORK/marks"; }
endsec() { echo; echo "=====END $1====="; }

cleanup() {
  trap - EXIT INT TERM
  [ -n "$BPID" ] && kill "$BPID" 2>/dev/null
  [ -n "$NPID" ] && kill "$NPID" 2>/dev/null
  [ -n "$IOBPID" ] && kill "$IOBPID" 2>/dev/null
  wait 2>/dev/null
  if [ -n "$APPLIED" ]; then
    sec cleanup-rollback; $ISOLATE rollback 2>&1; endsec cleanup-rollback
  fi
  # The I/O bench's files: only the directory this run made (its programs remove theirs on SIGTERM).
  case $IO_WORK in */isolate-bench-io.*) rm -rf "$IO_WORK" ;; esac
  # Only the cgroups this run created (full paths), once their processes are gone.
  for d in $MADE; do
    # A killed process leaves its cgroup only once it has exited and freed its memory.
    i=0
    while ! rmdir "$d" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
    [ -d "$d" ] && echo "arms: could not remove $d" >&2
  done
  return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for h in $CG_DIRS; do
  for d in $P $B $N; do
    if [ -e "$h/$d" ]; then
      echo "arms: $h/$d already exists; refusing to run (remove it, or find out who made it)" >&2
      exit 3
    fi
  done
done
for h in $CG_DIRS; do
  for d in $P $B; do
    mkdir "$h/$d" && MADE="$h/$d $MADE" || exit 3
    # A new v1 cpuset has no CPUs and no memory nodes: no task can join it until it has some.
    if [ "${CPUSET_V1:-0}" = 1 ] && [ "$h" = "$CG" ]; then
      cat "$h/cpuset.cpus" > "$h/$d/cpuset.cpus" && cat "$h/cpuset.mems" > "$h/$d/cpuset.mems" || exit 3
    fi
  done
done

mark start
sec topology; $ISOLATE topology 2>&1; endsec topology
sec topology-json; $ISOLATE topology --json 2>&1; endsec topology-json

# Run a command inside cgroup $1: it is there from its first instruction, as a YARN container is.
# exec: in "in_cg ... &" the background job is then the command itself, so $! is what to kill.
# Call it in a subshell or in the background only: it replaces the shell that runs it.
in_cg() {
  cg=$1
  shift
  dirs=
  for h in $CG_DIRS; do [ -d "$h/$cg" ] && dirs="$dirs $h/$cg"; done
  exec sh -c 'for d in $0; do echo $$ > "$d/cgroup.procs" || exit 97; done; exec "$@"' "$dirs" "$@"
}

# What the kernel says each bench cgroup may use during an arm (evidence the plan took effect).
# The noise service sits below system.slice, which is what strict fences.
cpus_of() {
  for d in $P $B ${NPID:+system.slice}; do
    [ -d "$CG/$d" ] || continue
    if [ "${CPUSET_V1:-0}" = 1 ]; then
      e=$(cat "$CG/$d/cpuset.effective_cpus" 2>/dev/null || echo "?")
      echo "/$d cpus=$e cpu_exclusive=$(cat "$CG/$d/cpuset.cpu_exclusive" 2>/dev/null || echo '?')"
    else
      e=$(cat "$CG/$d/cpuset.cpus.effective" 2>/dev/null || echo "all (no cpuset)")
      p=$(cat "$CG/$d/cpuset.cpus.partition" 2>/dev/null || echo '-')
      echo "/$d cpus=$e partition=$p"
    fi
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
    mkdir -p "$CG/$N" && MADE="$CG/$N $MADE"
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
mark "cpu arms done"

# ---- the I/O bench: a Kafka-shaped appender beside random direct writes on the same disk ----

# What the batch has written so far, "WRITES BYTES", from its own counters (iobatch --count-file).
io_totals() {
  cat "$WORK/iobatch.count" 2>/dev/null || echo "0 0"
}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# Writes one io file of a bench cgroup and reads it back; the arm fails on a refused write.
io_set() {
  f="$IO_CG/$1/$2"
  if ! echo "$3" > "$f"; then echo "io: $f: write of \"$3\" refused"; return 1; fi
  echo "$1/$2: $(tr '\n' ' ' < "$f")"
}

start_iobatch() {
  [ -n "$IOBPID" ] && return 0
  in_cg $B "$IOBATCH" --dir "$IO_WORK" --threads "$IO_BATCH_THREADS" --bs-kib "$IO_BATCH_BS_KIB" \
    --file-mib "$IO_BATCH_FILE_MIB" --count-file "$WORK/iobatch.count" --label isolate-bench-iobatch \
    2> "$WORK/iobatch.err" &
  IOBPID=$!
  # It writes its file in full first; the arms wait for that, however slow the disk.
  i=0
  while ! grep -q '^ready$' "$WORK/iobatch.err" 2>/dev/null; do
    if ! kill -0 "$IOBPID" 2>/dev/null || [ $i -ge 6000 ]; then
      sec io-batch-info; cat "$WORK/iobatch.err"; echo "iobatch did not get ready"; endsec io-batch-info
      return 1
    fi
    sleep 0.1; i=$((i + 1))
  done
  mark "io batch ready"
  sec io-batch-info; grep -v '^ready$' "$WORK/iobatch.err"; endsec io-batch-info
}

io_probe() {
  arm=$1
  set -- $(io_totals); ios0=$1; bytes0=$2; t0=$(now_ms)
  (in_cg $P "$APPENDER" --dir "$IO_WORK" --label "io-$arm" --rate "$IO_RATE" --append "$IO_APPEND" \
    --fsync-ms "$IO_FSYNC_MS" --warmup "$WARMUP" --duration "$DURATION") > "$WORK/io-$arm.json" 2> "$WORK/io-$arm.err"
  rc=$?
  set -- $(io_totals); t1=$(now_ms)
  mark "io probe $arm done"
  sec "io-probe-$arm"; cat "$WORK/io-$arm.json"; endsec "io-probe-$arm"
  sec "io-probe-$arm-rc"; echo "$rc"; cat "$WORK/io-$arm.err"; endsec "io-probe-$arm-rc"
  IO_DIOS=$(( $1 - ios0 )); IO_DBYTES=$(( $2 - bytes0 )); IO_DMS=$(( t1 - t0 ))
  sec "io-batch-$arm"; echo "wios=$IO_DIOS wbytes=$IO_DBYTES ms=$IO_DMS"; endsec "io-batch-$arm"
}

if [ -n "$IO_ARMS" ]; then
  # The CPU bench's batch load would compete for the CPUs, not the disk: it stops here.
  if [ -n "$BPID" ]; then kill "$BPID" 2>/dev/null; wait "$BPID" 2>/dev/null; BPID=; fi
  IO_WORK="$IO_DIR/isolate-bench-io.$$"
  mkdir "$IO_WORK" || exit 3
  sec io-info; echo "kind=$IO_KIND hierarchy=$IO_CG devices=$IO_DEVS work=$IO_WORK"; endsec io-info
  eval "$IO_ISOLATE_FN"
  for arm in $IO_ARMS; do
    case $arm in
      alone) io_probe alone ;;
      unisolated)
        start_iobatch || break
        io_probe unisolated
        if [ -n "${CAP_SHARE:-}" ] && [ "$IO_DMS" -gt 0 ]; then
          CAP_WIOPS=$(( IO_DIOS * 1000 * CAP_SHARE / 100 / IO_DMS ))
          CAP_WBPS=$(( IO_DBYTES * 1000 * CAP_SHARE / 100 / IO_DMS ))
          [ "$CAP_WIOPS" -lt 1 ] && CAP_WIOPS=1
          [ "$CAP_WBPS" -lt 4096 ] && CAP_WBPS=4096
        fi ;;
      isolated)
        start_iobatch || break
        if [ -n "${CAP_SHARE:-}" ] && [ -z "${CAP_WIOPS:-}" ]; then
          sec io-settings-isolated; echo "no cap: the unisolated arm measured no batch writes to share"
          endsec io-settings-isolated
          sec io-settings-isolated-rc; echo 1; endsec io-settings-isolated-rc
          continue
        fi
        sec io-settings-isolated; io_isolate; rc=$?; endsec io-settings-isolated
        sec io-settings-isolated-rc; echo "$rc"; endsec io-settings-isolated-rc
        [ "$rc" = 0 ] && io_probe isolated ;;
      *) echo "arms: unknown I/O arm $arm" >&2; exit 2 ;;
    esac
  done
  mark "io arms done"
fi
mark done
sec marks; cat "$WORK/marks"; endsec marks
sec arms-done; echo ok; endsec arms-done
