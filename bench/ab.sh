#!/usr/bin/env bash
# A/B speed comparison of two rocetap builds on the same files, same
# machine, in one run: every command runs RUNS times for each build,
# interleaved (A B A B ...), and the table gives the median and min–max of
# CPU seconds (user+sys, the primary measure) and of wall seconds, with one
# core (taskset -c 0) and with every core. The measuring code is
# bench/lib.sh's, which bench/run.sh uses too.
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

# shellcheck source=bench/lib.sh
. bench/lib.sh

# --- the captures ------------------------------------------------------------
FILE=$OUT/ab.pcap
REPLAY_FILE=$OUT/ab-replay.pcap
REPLAY_MPT=$OUT/ab-replay.mpt.json
if [ ! -f "$FILE" ] || [ "$(cat "$FILE.n" 2>/dev/null)" != "$N" ]; then
	for f in "$FILE" "$REPLAY_FILE" "$REPLAY_MPT"; do
		made_here "$f" "$FILE.n" || exit 1
	done
	log "generating $FILE and $REPLAY_FILE ($N packets each)"
	"$GO" build -o "$OUT/gencap" ./internal/tools/gencap
	"$OUT/gencap" -force -n "$N" -o "$FILE"
	"$OUT/gencap" -force -n "$N" -o "$REPLAY_FILE" -mpt "$REPLAY_MPT"
	echo "$N" >"$FILE.n"
fi
cat "$FILE" "$REPLAY_FILE" >/dev/null # warm the page cache

# --- the commands ------------------------------------------------------------
FIELDS=(-T fields -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.reth.va)
NAMES=()
# add NAME ARGS...: the command rocetap ARGS, as arrays cmdN_a and cmdN_b.
add() {
	local i=${#NAMES[@]}
	NAMES+=("$1")
	shift
	eval "cmd${i}_a=(\"\$A_BIN\" \"\$@\")"
	eval "cmd${i}_b=(\"\$B_BIN\" \"\$@\")"
}
add "decode -T fields (4 fields)" decode -r "$FILE" "${FIELDS[@]}"
add "decode (summary lines)" decode -r "$FILE"
add "stats" stats -r "$FILE"
add "sessions" sessions -r "$FILE"
add "replay" replay -r "$REPLAY_FILE" --mpt "$REPLAY_MPT"

# Measured with bench/lib.sh (bench/run.sh measures the same way), each
# run of a build from a copy of its own (spread_binaries).
: >"$OUT/stderr.log"
spread_binaries "$RUNS" "$A_BIN" "$B_BIN"
rows=""
for i in "${!NAMES[@]}"; do
	for cores in 1 all; do
		interleave "$RUNS" "$cores" "cmd${i}_a" "cmd${i}_b"
		a=$(samples "cmd${i}_a" "$cores") b=$(samples "cmd${i}_b" "$cores")
		ratio=$(div "$(med "$b" 2)" "$(med "$a" 2)")
		label=$cores
		[ "$cores" = all ] && label="all ($(nproc))"
		rows+="| ${NAMES[$i]} | $label | $(mmm "$a" 2) | $(mmm "$b" 2) | $ratio | $(mmm "$a" 1) | $(mmm "$b" 1) |"$'\n'
	done
done

{
	echo "# A/B: two rocetap builds on the same files"
	echo
	echo "Made by \`bash bench/ab.sh\` (BASE=$BASE, RUNS=$RUNS, N=$N) on $(date -u '+%Y-%m-%d %H:%M UTC'):"
	echo "$(machine)."
	echo
	echo "- A: $A_NAME"
	echo "- B: $B_NAME"
	echo "- Files: \`$FILE\` ($(stat -c %s "$FILE") bytes) and \`$REPLAY_FILE\`, $N packets each (internal/tools/gencap), page cache warm; output to /dev/null."
	echo "- Each command ran $RUNS times per build, interleaved A B A B …, each run from a copy of its build's binary of its own (bench/lib.sh, spread_binaries); cells are median (min–max) seconds. CPU is user+sys (bench/rusage.py: wait4's rusage), the primary measure; one core is \`taskset -c 0\`; B/A is the ratio of the CPU medians (below 1: B is faster)."
	echo
	echo "| command | cores | A CPU s | B CPU s | B/A CPU | A wall s | B wall s |"
	echo "|---|---|---|---|---|---|---|"
	printf '%s' "$rows"
} >"$AB"
remove_copies
log "wrote $AB"
cat "$AB"
