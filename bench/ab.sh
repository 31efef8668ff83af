#!/usr/bin/env bash
# A/B speed comparison of two rocetap builds on the same files, same
# machine, in one run: every command runs RUNS times for each build,
# interleaved (A B A B ...), and the table gives the median and min–max of
# CPU seconds (user+sys, the primary measure) and of wall seconds, with one
# core (GOMAXPROCS=1) and with every core.
#
#   bash bench/ab.sh                 # A = origin of this branch's first parent (BASE), B = the working tree
#   BASE=afc7677 bash bench/ab.sh    # A = that commit
#   A_BIN=/tmp/old B_BIN=bin/rocetap bash bench/ab.sh
#
# Environment: BASE (commit for A, default HEAD~1), A_BIN/B_BIN (use these
# binaries instead of building), N (packets, default 1000000), RUNS
# (default 5), OUT (scratch, default bench/out), AB (the table, default
# bench/AB.md). The captures are bench/run.sh's (internal/tools/gencap),
# made again only when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-1000000}
RUNS=${RUNS:-5}
OUT=${OUT:-bench/out}
AB=${AB:-bench/AB.md}
GO=${GO:-go}
BASE=${BASE:-HEAD~1}
mkdir -p "$OUT"
log() { printf '== %s\n' "$*" >&2; }

# --- the two builds ----------------------------------------------------------
if [ -z "${A_BIN:-}" ]; then
	A_REV=$(git rev-parse --short "$BASE")
	A_BIN=$OUT/rocetap-$A_REV
	if [ ! -x "$A_BIN" ]; then
		log "building A ($A_REV) in a temporary worktree"
		tmp=$(mktemp -d)
		git worktree add -q --detach "$tmp" "$A_REV"
		(cd "$tmp" && "$GO" build -o "$OLDPWD/$A_BIN" ./cmd/rocetap)
		git worktree remove --force "$tmp"
	fi
	A_NAME="$A_REV"
else
	A_NAME=$A_BIN
fi
if [ -z "${B_BIN:-}" ]; then
	B_BIN=$OUT/rocetap-worktree
	log "building B (the working tree)"
	"$GO" build -o "$B_BIN" ./cmd/rocetap
	B_NAME="working tree ($(git rev-parse --short HEAD)$(git diff --quiet || echo ', with changes'))"
else
	B_NAME=$B_BIN
fi

# --- the captures ------------------------------------------------------------
FILE=$OUT/ab.pcap
REPLAY_FILE=$OUT/ab-replay.pcap
REPLAY_MPT=$OUT/ab-replay.mpt.json
if [ ! -f "$FILE" ] || [ "$(cat "$FILE.n" 2>/dev/null)" != "$N" ]; then
	log "generating $FILE and $REPLAY_FILE ($N packets each)"
	"$GO" build -o "$OUT/gencap" ./internal/tools/gencap
	"$OUT/gencap" -n "$N" -o "$FILE"
	"$OUT/gencap" -n "$N" -o "$REPLAY_FILE" -mpt "$REPLAY_MPT"
	echo "$N" >"$FILE.n"
fi
cat "$FILE" "$REPLAY_FILE" >/dev/null # warm the page cache

# --- the commands ------------------------------------------------------------
FIELDS="-T fields -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.reth.va"
NAMES=()
ARGS=()
add() { NAMES+=("$1"); ARGS+=("$2"); }
add "decode -T fields (4 fields)" "decode -r $FILE $FIELDS"
add "decode (summary lines)" "decode -r $FILE"
add "stats" "stats -r $FILE"
add "sessions" "sessions -r $FILE"
add "replay" "replay -r $REPLAY_FILE --mpt $REPLAY_MPT"

# run BIN PROCS ARGS: prints "wall cpu" of one run (output to /dev/null).
run() {
	local bin=$1 procs=$2
	shift 2
	local t0 t1
	t0=$EPOCHREALTIME
	# shellcheck disable=SC2086
	if [ "$procs" = all ]; then
		/usr/bin/time -f '%U %S' -o "$OUT/ab.time" env -u GOMAXPROCS "$bin" $* >/dev/null 2>>"$OUT/ab.stderr" || true
	else
		/usr/bin/time -f '%U %S' -o "$OUT/ab.time" env GOMAXPROCS=1 "$bin" $* >/dev/null 2>>"$OUT/ab.stderr" || true
	fi
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'NR == FNR { cpu = $1 + $2 } END { printf "%.3f %.2f\n", b - a, cpu }' "$OUT/ab.time"
}

# stats FILE COLUMN: "median (min–max)" of column COLUMN of FILE.
stats() {
	sort -g -k"$2","$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END {
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.2f (%.2f–%.2f)", m, v[1], v[NR] }'
}
median() {
	sort -g -k"$2","$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { printf "%.4f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

[ -x /usr/bin/time ] || { echo "bench/ab.sh: needs GNU time (/usr/bin/time; apt-get install time)" >&2; exit 1; }
: >"$OUT/ab.stderr"
rows=""
for i in "${!NAMES[@]}"; do
	for procs in 1 all; do
		: >"$OUT/ab.a" && : >"$OUT/ab.b"
		for ((r = 1; r <= RUNS; r++)); do
			log "${NAMES[$i]}, cores: $procs, run $r/$RUNS"
			run "$A_BIN" "$procs" ${ARGS[$i]} >>"$OUT/ab.a"
			run "$B_BIN" "$procs" ${ARGS[$i]} >>"$OUT/ab.b"
		done
		ratio=$(awk -v a="$(median "$OUT/ab.a" 2)" -v b="$(median "$OUT/ab.b" 2)" 'BEGIN { if (a > 0) printf "%.2f", b / a; else print "n/a" }')
		cores=$procs
		[ "$procs" = all ] && cores="all ($(nproc))"
		rows+="| ${NAMES[$i]} | $cores | $(stats "$OUT/ab.a" 2) | $(stats "$OUT/ab.b" 2) | $ratio | $(stats "$OUT/ab.a" 1) | $(stats "$OUT/ab.b" 1) |"$'\n'
	done
done

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
{
	echo "# A/B: two rocetap builds on the same files"
	echo
	echo "Made by \`bash bench/ab.sh\` (BASE=$BASE, RUNS=$RUNS, N=$N) on $(date -u '+%Y-%m-%d %H:%M UTC'):"
	echo "$(nproc) cores ($cpu), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM, Go $("$GO" env GOVERSION)."
	echo
	echo "- A: $A_NAME"
	echo "- B: $B_NAME"
	echo "- Files: \`$FILE\` ($(stat -c %s "$FILE") bytes) and \`$REPLAY_FILE\`, $N packets each (internal/tools/gencap), page cache warm; output to /dev/null."
	echo "- Each command ran $RUNS times per build, interleaved A B A B …; cells are median (min–max) seconds. CPU is user+sys (GNU time), the primary measure; B/A is the ratio of the CPU medians (below 1: B is faster)."
	echo
	echo "| command | cores | A CPU s | B CPU s | B/A CPU | A wall s | B wall s |"
	echo "|---|---|---|---|---|---|---|"
	printf '%s' "$rows"
} >"$AB"
log "wrote $AB"
cat "$AB"
