#!/usr/bin/env bash
# Container test (ctest label "container"; run it with scripts/test-container). Builds
# the deploy/Dockerfile image on this machine with no registry and serves bots from it:
#   1. base image: `debootstrap --variant=minbase bookworm` from the apt mirror this
#      machine uses, imported with `podman import` (kept between runs);
#   2. image: `buildah bud` (vfs storage, cached layers) with that base as BASE_IMAGE;
#   3. the image itself: non-root user, exposed ports, saves volume, stop signal,
#      health check, entrypoint, and no compiler left in it;
#   4. loam-server in the container (scenes/flat.toml, a host folder as the saves
#      volume): /readyz, /healthz, /status and /metrics from the host, the image's
#      HEALTHCHECK command, swarm bots (the image's loam-bots) joining and playing,
#      JSON log lines;
#   5. `podman stop`: exit code 0 and a world database in the volume that `loam-tool
#      export-save` exports and `save-info` reads;
#   6. a second container on the same volume loads that world database.
# Exits 77 (ctest: skipped) unless LOAM_CONTAINER_TEST=1, because it installs nothing
# itself, needs root and the Debian mirror, and takes 20 minutes the first time (a
# warm ccache and cached layers bring a rebuild to 5).
#
# Knobs (environment): LOAM_CONTAINER_WORK (default build/container), LOAM_TEST_IMAGE
# (localhost/loam:test), LOAM_JOBS (2 compile jobs), LOAM_MAX_LOAD (6: wait for the
# 1-minute load average to drop below this before building, at most LOAM_LOAD_WAIT=1800
# seconds, then build anyway), LOAM_CCACHE_DIR (host ccache mounted into the build;
# "" for none), LOAM_DEBIAN_MIRROR (default: the first Debian mirror in apt's sources),
# LOAM_SKIP_BUILD=1 (test an image built before).
set -euo pipefail

if [[ "${LOAM_CONTAINER_TEST:-0}" != 1 ]]; then
  echo "container_test: skipped (set LOAM_CONTAINER_TEST=1, or run scripts/test-container)"
  exit 77
fi

repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="${LOAM_CONTAINER_WORK:-$repo/build/container}"
image="${LOAM_TEST_IMAGE:-localhost/loam:test}"
base_image="localhost/loam-base:bookworm"
loam_uid=10001  # deploy/Dockerfile's LOAM_UID
mkdir -p "$work"

log() { printf '%s container_test: %s\n' "$(date -u +%H:%M:%S)" "$*"; }
fail() {
  log "FAIL: $*"
  exit 1
}

for tool in podman buildah runc debootstrap curl python3; do
  command -v "$tool" >/dev/null || fail "$tool is missing (scripts/test-container installs it)"
done
[[ $(id -u) -eq 0 ]] || fail "needs root (vfs storage, debootstrap)"

# The recipe known to work on a VM without systemd's cgroup delegation: no default
# ulimits, cgroupfs, runc, vfs storage (no overlay mounts needed), file event log.
export CONTAINERS_CONF="$work/containers.conf"
cat >"$CONTAINERS_CONF" <<'CONF'
[containers]
default_ulimits = []

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "runc"
CONF
podman=(podman --runtime runc --cgroup-manager cgroupfs --storage-driver vfs)
buildah=(buildah --storage-driver vfs)

# ---------------------------------------------------------------- 1. base image
debian_mirror() {
  local m
  m=$(grep -hsE '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources |
    grep -oE 'https?://[^ ]+/debian/?' | grep -v security | head -n1 || true)
  echo "${m:-http://deb.debian.org/debian}"
}

if ! "${podman[@]}" image exists "$base_image"; then
  mirror="${LOAM_DEBIAN_MIRROR:-$(debian_mirror)}"
  rootfs="$work/rootfs-bookworm"
  if [[ ! -x "$rootfs/usr/bin/apt-get" || ! -f "$rootfs/.loam-complete" ]]; then
    log "debootstrap --variant=minbase bookworm from $mirror"
    rm -rf "$rootfs"
    nice -n 19 debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
      fail "debootstrap failed; see $work/debootstrap.log"
    touch "$rootfs/.loam-complete"
  fi
  log "importing $rootfs as $base_image"
  tar -C "$rootfs" --exclude=./.loam-complete --exclude='./var/cache/apt/archives/*.deb' \
    --exclude='./var/lib/apt/lists/*_Packages' -c . |
    "${podman[@]}" import --change 'CMD ["/bin/bash"]' - "$base_image" >/dev/null
fi

# ---------------------------------------------------------------- 2. image
if [[ "${LOAM_SKIP_BUILD:-0}" != 1 ]]; then
  max_load="${LOAM_MAX_LOAD:-6}"
  waited=0
  while :; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    if awk -v l="$load" -v m="$max_load" 'BEGIN { exit !(l < m) }'; then break; fi
    if ((waited >= ${LOAM_LOAD_WAIT:-1800})); then
      log "load average still $load after ${waited}s; building anyway at nice 19"
      break
    fi
    log "load average $load >= $max_load; waiting"
    sleep 30
    waited=$((waited + 30))
  done
  mounts=()
  ccache_dir="${LOAM_CCACHE_DIR-$(ccache --get-config cache_dir 2>/dev/null || true)}"
  if [[ -n "$ccache_dir" ]]; then
    mkdir -p "$ccache_dir"
    mounts=(--volume "$ccache_dir:/ccache")
  fi
  log "building $image (buildah bud, base $base_image, ${LOAM_JOBS:-2} jobs, nice 19)"
  t0=$SECONDS
  nice -n 19 "${buildah[@]}" bud --layers --format docker --network host "${mounts[@]}" \
    --build-arg "BASE_IMAGE=$base_image" --build-arg "JOBS=${LOAM_JOBS:-2}" \
    -f "$repo/deploy/Dockerfile" -t "$image" "$repo" >"$work/build.log" 2>&1 ||
    fail "image build failed; see $work/build.log"
  log "built in $((SECONDS - t0)) s"
fi
"${podman[@]}" image exists "$image" || fail "no image $image"

# ---------------------------------------------------------------- 3. the image
inspect() { "${podman[@]}" image inspect --format "$1" "$image"; }
user=$(inspect '{{.Config.User}}')
[[ "$user" == "$loam_uid:$loam_uid" ]] || fail "image user is '$user', want $loam_uid:$loam_uid"
ports=$(inspect '{{range $p, $v := .Config.ExposedPorts}}{{$p}} {{end}}')
[[ "$ports" == *7777/udp* && "$ports" == *7778/tcp* ]] || fail "exposed ports '$ports'"
volumes=$(inspect '{{range $v, $x := .Config.Volumes}}{{$v}} {{end}}')
[[ "$volumes" == *"/var/lib/loam/saves"* ]] || fail "volumes '$volumes'"
stopsig=$(inspect '{{.Config.StopSignal}}')
[[ "$stopsig" == SIGTERM || "$stopsig" == 15 ]] || fail "stop signal '$stopsig'"
health=$("${podman[@]}" image inspect --format '{{json .Config.Healthcheck}}' "$image" 2>/dev/null || true)
[[ "$health" == *loam-healthcheck* ]] || fail "no HEALTHCHECK in the image: '$health'"
entry=$(inspect '{{json .Config.Entrypoint}}')
[[ "$entry" == *loam-server* ]] || fail "entrypoint $entry"
in_image() { "${podman[@]}" run --rm --network host --no-healthcheck --entrypoint "$1" "$image" "${@:2}"; }
[[ $(in_image id -u) == "$loam_uid" ]] || fail "the container does not run as uid $loam_uid"
if in_image bash -c 'command -v g++ || command -v cc || command -v cmake'; then
  fail "a compiler or cmake is left in the runtime image"
fi
in_image loam-bots --help >/dev/null || fail "loam-bots does not start in the image"
in_image loam-tool --help >/dev/null || fail "loam-tool does not start in the image"
in_image loam-server --help >/dev/null || fail "loam-server does not start in the image"
size=$(inspect '{{.Size}}')
log "image ok: user $user, ports $ports, volume $volumes, $((size / 1048576)) MiB"

# ---------------------------------------------------------------- 4. serve bots
free_port() {
  python3 -c 'import socket,sys
kind = socket.SOCK_DGRAM if sys.argv[1] == "udp" else socket.SOCK_STREAM
s = socket.socket(socket.AF_INET, kind); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' "$1"
}
game_port=$(free_port udp)
http_port=$(free_port tcp)
run_dir=$(mktemp -d "$work/run.XXXXXX")
saves="$run_dir/saves"
reports="$run_dir/reports"
mkdir -p "$saves" "$reports"
chown "$loam_uid:$loam_uid" "$saves" "$reports"
name="loam-container-test-$$"
containers=()
cleanup() {
  for c in "${containers[@]}"; do "${podman[@]}" rm -f "$c" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT

start_server() {  # start_server NAME
  containers+=("$1")
  "${podman[@]}" run -d --name "$1" --network host --health-interval disable \
    -v "$saves:/var/lib/loam/saves" \
    -e LOAM_SCENE=scenes/flat.toml -e LOAM_NAME=container-test -e LOAM_PORT="$game_port" \
    -e LOAM_HTTP_PORT="$http_port" -e LOAM_HTTP_BIND=127.0.0.1 -e LOAM_SAVE_INTERVAL=0 \
    -e LOAM_STATS_INTERVAL=5 -e LOAM_LOG_FORMAT=json \
    "$image" >/dev/null
}
url() { echo "http://127.0.0.1:$http_port$1"; }
wait_ready() {  # wait_ready NAME: until /readyz is 200 (at most 600 s)
  local t0=$SECONDS
  until curl -fsS -o /dev/null --max-time 2 "$(url /readyz)" 2>/dev/null; do
    if [[ "$("${podman[@]}" inspect --format '{{.State.Running}}' "$1")" != true ]]; then
      "${podman[@]}" logs "$1" >&2 || true
      fail "the server container exited before becoming ready"
    fi
    ((SECONDS - t0 < 600)) || fail "not ready after 600 s"
    sleep 1
  done
  log "ready after $((SECONDS - t0)) s"
}
metric() {  # metric NAME: the value of an unlabelled sample on /metrics
  curl -fsS --max-time 5 "$(url /metrics)" | awk -v n="$1" '$1 == n { print $2; found = 1 } END { exit !found }'
}

log "starting loam-server (flat, UDP $game_port, HTTP $http_port, saves $saves)"
start_server "$name"
wait_ready "$name"
[[ $(curl -fsS "$(url /healthz)") == ok ]] || fail "/healthz is not ok"
"${podman[@]}" healthcheck run "$name" >/dev/null || fail "the image's HEALTHCHECK failed on a healthy server"
status=$(curl -fsS "$(url /status)")
python3 -c 'import json,sys
s = json.loads(sys.argv[1])
assert s["name"] == "container-test" and s["scene"] == "flat" and s["ready"] is True, s' "$status" ||
  fail "/status: $status"
[[ $(metric loam_ready) == 1 ]] || fail "loam_ready is not 1"

bots=8
log "joining $bots swarm bots for 20 s (the image's loam-bots)"
"${podman[@]}" run -d --name "$name-bots" --network host --no-healthcheck -v "$reports:/reports" --entrypoint loam-bots "$image" \
  --server "127.0.0.1:$game_port" --count "$bots" --mode swarm --duration 20 --report /reports/bots.json >/dev/null
containers+=("$name-bots")
max_players=0
while [[ "$("${podman[@]}" inspect --format '{{.State.Running}}' "$name-bots")" == true ]]; do
  p=$(metric loam_players || echo 0)
  ((p > max_players)) && max_players=$p
  sleep 1
done
bots_rc=$("${podman[@]}" inspect --format '{{.State.ExitCode}}' "$name-bots")
"${podman[@]}" logs "$name-bots" >"$run_dir/bots.log" 2>&1 || true
[[ "$bots_rc" == 0 ]] || fail "loam-bots exited $bots_rc; see $run_dir/bots.log"
python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
t = r["totals"]
assert t["bots"] == int(sys.argv[2]) and t["ok"] == t["bots"] and t["bytes_in"] > 0, t' "$reports/bots.json" "$bots" ||
  fail "bot report: $(head -c 2000 "$reports/bots.json")"
((max_players >= bots)) || fail "loam_players peaked at $max_players, want $bots"
joins=$(metric loam_joins_total)
((joins >= bots)) || fail "loam_joins_total is $joins"
metrics=$(curl -fsS "$(url /metrics)")
for family in loam_step_seconds_bucket loam_sent_message_bytes_total loam_received_bytes_total \
  loam_resident_memory_bytes loam_tick_overruns_total loam_malformed_packets_total; do
  grep -q "^$family" <<<"$metrics" || fail "/metrics has no $family"
done
log "bots ok: $bots joined (players peaked at $max_players), loam_joins_total $joins," \
  "resident $(($(metric loam_resident_memory_bytes) / 1048576)) MiB"

# ---------------------------------------------------------------- 5. stop, save
log "podman stop (SIGTERM)"
"${podman[@]}" stop -t 120 "$name" >/dev/null
rc=$("${podman[@]}" inspect --format '{{.State.ExitCode}}' "$name")
"${podman[@]}" logs "$name" >"$run_dir/server-1.log" 2>&1 || true
[[ "$rc" == 0 ]] || fail "loam-server exited $rc after SIGTERM; see $run_dir/server-1.log"
python3 -c 'import json,sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
assert lines, "no log lines"
for l in lines:
    r = json.loads(l)
    assert {"time", "level", "component", "msg"} <= r.keys(), l' "$run_dir/server-1.log" ||
  fail "log lines are not JSON records; see $run_dir/server-1.log"
save="$saves/flat-1.loamdb"
[[ -f "$save" ]] || fail "no flat-1.loamdb in the volume: $(ls -la "$saves")"
# The volume is mounted read-only: export a copy of the database to a single-file save
# inside the container and read that back.
"${podman[@]}" run --rm --network host --no-healthcheck -v "$saves:/saves:ro" --entrypoint sh "$image" -c \
  'cp /saves/flat-1.loamdb /tmp/w.loamdb && loam-tool export-save --db /tmp/w.loamdb --out /tmp/w.loamsave >&2 &&
   loam-tool save-info /tmp/w.loamsave' >"$run_dir/save-info.txt" || fail "loam-tool export-save/save-info rejects $save"
saved_tick=$(awk '$1 == "tick" { print $2 }' "$run_dir/save-info.txt")
log "stopped with exit 0; world database $(basename "$save") (tick $saved_tick) exports and reads back"

# ---------------------------------------------------------------- 6. load it again
log "starting a second container on the same volume"
start_server "$name-2"
wait_ready "$name-2"
"${podman[@]}" logs "$name-2" >"$run_dir/server-2.log" 2>&1 || true
grep -q "loaded world database" "$run_dir/server-2.log" || fail "the second server did not load the world database; see $run_dir/server-2.log"
tick=$(metric loam_tick)
((tick >= saved_tick)) || fail "the second server is at tick $tick, before the save's $saved_tick"
"${podman[@]}" stop -t 120 "$name-2" >/dev/null
rc=$("${podman[@]}" inspect --format '{{.State.ExitCode}}' "$name-2")
[[ "$rc" == 0 ]] || fail "the second loam-server exited $rc"

log "PASS (logs and reports in $run_dir)"
