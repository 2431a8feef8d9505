#!/bin/bash
# An extra agent ("twin") beside a running bench/agent-idle.mjs, on a copy of its host root, so that
# agents of different ages or builds are measured in the same minutes (this VM's speed drifts through
# the hour more than most differences between them). Root only, like the bench.
#   bench/age/twin.sh NAME PORT [RENEW_S] [RECOMPACT_S] [extra node flags...]
# Runs `node dist/cli.js agent` under the executable's runtime (Node 24) with the executable's V8 flags
# and the unit's environment, in a private cgroup2 mount as the bench does; prints its PID. Follow it
# with bench/age/stat-sampler.sh. RENEW_S: re-exec every N s (renew.cjs); RECOMPACT_S: a full GC that
# moves about half the old generation's objects every N s (recompact.cjs). AGENT_ARGS: more agent
# flags (e.g. "--check-interval 1h"). TWIN_WRAP: a command the runtime runs under (e.g. "valgrind
# --tool=callgrind --smc-check=all-non-file", to count a round's instructions). TWIN_DIST: another
# build's directory to run: a copy of dist/ inside the repository, so its lazy imports resolve
# (.cache/dist-NAME, which git and biome leave alone). Stop it with
# pkill -f -- "--root /tmp/isolate-agent-bench-XXXXXX-NAME ".
set -eu
here=$(cd "$(dirname "$0")" && pwd); repo=$(cd "$here/../.." && pwd)
R=$(ls -d /tmp/isolate-agent-bench-?????? | head -1)
name=$1; port=$2; renew=${3:-0}; recompact=${4:-0}; shift $(( $# < 4 ? $# : 4 ))
T=$R-$name; rm -rf "$T"; cp -a "$R" "$T"
cd "$repo"
# The unit's GLIBC_TUNABLES and NODE_OPTIONS and the executable's V8 flags, from where they are kept.
for kv in $(sed -n -E 's/^Environment=((GLIBC_TUNABLES|NODE_OPTIONS)=\S+)$/\1/p' systemd/isolate.service); do export "$kv"; done
# The private cgroup2 mount the benches run the agent in (bench/private-cgroup2.mjs), as an argv prefix.
mapfile -d '' private_cgroup2 < <(node --input-type=module -e "import { PRIVATE_CGROUP2 } from './bench/private-cgroup2.mjs'; process.stdout.write(PRIVATE_CGROUP2.map((a) => a + '\\0').join(''))")
read -ra exec_argv <<< "$(node --input-type=module -e "import { EXEC_ARGV } from './scripts/bundle-common.mjs'; console.log(EXEC_ARGV.join(' '))")"
export ISOLATE_LOG=off RENEW_S=$renew RENEW_LOG=/tmp/$name.renew RECOMPACT_S=$recompact RECOMPACT_LOG=/tmp/$name.recompact
N=$(ls -d "$repo"/.cache/node-runtime/24.*/node | head -1)
read -ra wrap <<< "${TWIN_WRAP:-}"
setsid nohup "${private_cgroup2[@]}" \
  "${wrap[@]}" "$N" "${exec_argv[@]}" "$@" --require "$here/renew.cjs" --require "$here/recompact.cjs" \
  "${TWIN_DIST:-dist}/cli.js" agent --root "$T" --policy "$T/policy.yaml" --interval 1s --metrics-address "127.0.0.1:$port" ${AGENT_ARGS:-} \
  > "/tmp/$name.out" 2>&1 < /dev/null &
sleep 2
for p in $(pgrep -f -- "--root $T "); do c=$(cat /proc/$p/comm); [ "$c" != sh ] && [ "$c" != unshare ] && echo "$name pid=$p"; done | tail -1
