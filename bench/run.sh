#!/usr/bin/env bash
# Speed benchmark: rocetap against tshark and cat on a generated RoCEv2
# capture. Run from the repository root (make bench runs it):
#
#   bash bench/run.sh            # N=1000000 packets
#   N=200000 bash bench/run.sh   # smaller, quicker
#
# Writes bench/RESULTS.md; scratch files go to bench/out/ (gitignored).
# Environment: N (packets, default 1000000), RUNS (runs of the fast
# commands, best taken, default 3), TSHARK_RUNS (default 1), SAMPLE (packets
# compared field by field with tshark, default 10000), STREAM_N (packets
# gencap streams into `rocetap stats -r -` for the peak-memory check,
# default 10000000; 0 skips it), STREAM_RUNS (default 1), FLOW_BENCH (0
# skips `go test -bench Track ./flow`), REPLAY (0 skips the rocetap replay
# section and its capture), CAPBENCH (0 skips the live capture load test,
# which needs root), TUI (0 skips the rocetap tui section, bench/tui.sh,
# whose own variables start with TUI_), OUT (scratch directory, default
# bench/out), RESULTS (default bench/RESULTS.md).
set -euo pipefail

cd "$(dirname "$0")/.."
t_start=$EPOCHREALTIME
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

N=${N:-1000000}
RUNS=${RUNS:-3}
TSHARK_RUNS=${TSHARK_RUNS:-1}
SAMPLE=${SAMPLE:-10000}
STREAM_N=${STREAM_N:-10000000}
STREAM_RUNS=${STREAM_RUNS:-1}
FLOW_BENCH=${FLOW_BENCH:-1}
REPLAY=${REPLAY:-1}
CAPBENCH=${CAPBENCH:-1}
TUI=${TUI:-1}
GO=${GO:-go}
OUT=${OUT:-bench/out}
FILE=$OUT/bench.pcap
# rocetap replay's capture: the same traffic with one responder for every QP
# pair (gencap -mpt), and that responder's MPT file.
REPLAY_FILE=$OUT/replay.pcap
REPLAY_MPT=$OUT/replay.mpt.json
RESULTS=${RESULTS:-bench/RESULTS.md}
BIN=bin/rocetap
FIELDS=(-e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.reth.va)

mkdir -p "$OUT"
: >"$OUT/stderr.log"
log() { printf '== %s\n' "$*" >&2; }

# --- tools -------------------------------------------------------------------
if [ ! -x "$BIN" ]; then
	log "building $BIN"
	"$GO" build -o "$BIN" ./cmd/rocetap
fi
command -v tshark >/dev/null || { echo "bench: tshark not found (make test-deps installs it)" >&2; exit 1; }

# Peak RSS: GNU time if present (installed with apt-get when missing), else
# a python3 wrapper around getrusage, else not measured.
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
if [ ! -x /usr/bin/time ]; then
	log "installing GNU time"
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null 2>&1 || true
fi
if [ -x /usr/bin/time ]; then
	RSS_TOOL="GNU time (%M, ru_maxrss)"
elif command -v python3 >/dev/null; then
	RSS_TOOL="python3 resource.getrusage(RUSAGE_CHILDREN).ru_maxrss"
else
	RSS_TOOL="none (peak RSS not measured)"
fi

# --- capture -----------------------------------------------------------------
log "building gencap"
"$GO" build -o "$OUT/gencap" ./internal/tools/gencap
gen_hash=$(cat internal/tools/gencap/*.go | sha256sum | cut -c1-16)
want_meta="n=$N gencap=$gen_hash"
have_meta=""
if [ -f "$FILE" ] && [ -f "$FILE.meta" ]; then
	read -r m_n m_gen m_size <"$FILE.meta" || true
	if [ "$m_n $m_gen" = "$want_meta" ] && [ "$m_size" = "bytes=$(stat -c %s "$FILE")" ]; then
		have_meta=yes
	fi
fi
if [ -n "$have_meta" ]; then
	log "reusing $FILE ($want_meta)"
	gen_note="reused from an earlier run (bench/out/bench.pcap.meta matched)"
else
	log "generating $FILE with $N packets"
	rm -f "$FILE.meta"
	t0=$EPOCHREALTIME
	"$OUT/gencap" -n "$N" -o "$FILE"
	gen_note="in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }') s"
	echo "$want_meta bytes=$(stat -c %s "$FILE")" >"$FILE.meta"
fi
SIZE=$(stat -c %s "$FILE")

if [ "$REPLAY" != 0 ]; then
	want_rmeta="n=$N gencap=$gen_hash mpt"
	have_rmeta=""
	if [ -f "$REPLAY_FILE" ] && [ -f "$REPLAY_MPT" ] && [ -f "$REPLAY_FILE.meta" ]; then
		read -r m_n m_gen m_mpt m_size <"$REPLAY_FILE.meta" || true
		if [ "$m_n $m_gen $m_mpt" = "$want_rmeta" ] && [ "$m_size" = "bytes=$(stat -c %s "$REPLAY_FILE")" ]; then
			have_rmeta=yes
		fi
	fi
	if [ -n "$have_rmeta" ]; then
		log "reusing $REPLAY_FILE ($want_rmeta)"
		replay_gen_note="reused from an earlier run"
	else
		log "generating $REPLAY_FILE and $REPLAY_MPT"
		rm -f "$REPLAY_FILE.meta"
		t0=$EPOCHREALTIME
		"$OUT/gencap" -n "$N" -o "$REPLAY_FILE" -mpt "$REPLAY_MPT"
		replay_gen_note="in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }') s"
		echo "$want_rmeta bytes=$(stat -c %s "$REPLAY_FILE")" >"$REPLAY_FILE.meta"
	fi
	REPLAY_SIZE=$(stat -c %s "$REPLAY_FILE")
fi

log "warming the page cache"
cat "$FILE" >/dev/null

# --- timing ------------------------------------------------------------------
# rss_run OUTFILE CMD...: runs CMD with stdout to OUTFILE (stdin inherited,
# so it can end a pipeline) and writes "PEAK_RSS_KIB CPU_SECONDS" to
# $OUT/rss ("0 n/a" when no tool can measure them).
rss_run() {
	local out=$1
	shift
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%M %U %S' -o "$OUT/rss.raw" "$@" >"$out" 2>>"$OUT/stderr.log"
		tail -n 1 "$OUT/rss.raw" | awk '{ printf "%d %.2f\n", $1, $2 + $3 }' >"$OUT/rss"
	elif command -v python3 >/dev/null; then
		python3 -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
u = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%d %.2f\n" % (u.ru_maxrss, u.ru_utime + u.ru_stime))
sys.exit(rc)' "$OUT/rss" "$@" >"$out" 2>>"$OUT/stderr.log"
	else
		"$@" >"$out" 2>>"$OUT/stderr.log"
		echo "0 n/a" >"$OUT/rss"
	fi
}

# measure KEY RUNS CMD...: runs CMD (stdout to /dev/null) RUNS times; keeps
# the best wall time (EPOCHREALTIME, ms resolution) and the largest peak RSS.
declare -A SECS RSS CPU CMDS
measure() {
	local key=$1 runs=$2
	shift 2
	CMDS[$key]="$* > /dev/null"
	local best="" peak=0 cpu="" i t0 t1 s r c
	for ((i = 1; i <= runs; i++)); do
		log "$key run $i/$runs"
		t0=$EPOCHREALTIME
		rss_run /dev/null "$@"
		t1=$EPOCHREALTIME
		read -r r c <"$OUT/rss"
		s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
		if [ -z "$best" ] || awk -v s="$s" -v b="$best" 'BEGIN { exit !(s < b) }'; then best=$s cpu=$c; fi
		[ "$r" -gt "$peak" ] && peak=$r
	done
	SECS[$key]=$best
	RSS[$key]=$peak
	CPU[$key]=${cpu:-n/a}
}

measure cat "$RUNS" cat "$FILE"
measure rocetap_fields "$RUNS" "$BIN" decode -r "$FILE" -T fields "${FIELDS[@]}"
measure rocetap_summary "$RUNS" "$BIN" decode -r "$FILE"
# -T fields checks the ICRC only when a rocetap.* field is asked for; this
# row shows the cost of the check.
measure rocetap_icrc "$RUNS" "$BIN" decode -r "$FILE" -T fields "${FIELDS[@]}" -e rocetap.icrc.status
# The analysis path (read, decode with the ICRC checked, flow tracker, in
# capture order): stats on one core (one goroutine), then with every core
# (a reader goroutine beside the decoding tracker), then sessions and expert. cat
# again first, so the ratios compare runs made close together.
measure cat2 "$RUNS" cat "$FILE"
measure stats_1 "$RUNS" env GOMAXPROCS=1 "$BIN" stats -r "$FILE"
measure stats "$RUNS" env -u GOMAXPROCS "$BIN" stats -r "$FILE"
measure sessions "$RUNS" env -u GOMAXPROCS "$BIN" sessions -r "$FILE"
measure expert "$RUNS" env -u GOMAXPROCS "$BIN" expert -r "$FILE"
# rocetap replay: read, decode (ICRC checked), feed every request to the
# reference HCA model and compare every response, in capture order. Checked
# first (it must find no divergence: exit status 0), then timed.
REPLAY_STATUS="skipped" REPLAY_PKTS=0 REPLAY_VERDICT=""
if [ "$REPLAY" != 0 ]; then
	log "checking rocetap replay (and warming the page cache with its capture)"
	cat "$REPLAY_FILE" >/dev/null
	REPLAY_STATUS=0
	"$BIN" replay -r "$REPLAY_FILE" --mpt "$REPLAY_MPT" >"$OUT/replay.txt" 2>>"$OUT/stderr.log" || REPLAY_STATUS=$?
	REPLAY_VERDICT=$(tail -n 1 "$OUT/replay.txt")
	REPLAY_PKTS=$(awk '$1 == "Packets:" { sub(":", "", $2); print $2; exit }' "$OUT/replay.txt")
	REPLAY_PKTS=${REPLAY_PKTS:-0}
	if [ "$REPLAY_STATUS" = 0 ]; then
		measure replay "$RUNS" "$BIN" replay -r "$REPLAY_FILE" --mpt "$REPLAY_MPT"
	else
		log "WARNING: rocetap replay exited $REPLAY_STATUS on $REPLAY_FILE (see $OUT/replay.txt); not timed"
	fi
	log "go test -bench Replay ./replay"
	"$GO" test -run XXX -bench Replay -benchmem ./replay >"$OUT/gotest-replay.txt" 2>&1 || log "WARNING: go test -bench Replay ./replay failed (see $OUT/gotest-replay.txt)"
fi
measure tshark_fields "$TSHARK_RUNS" tshark -r "$FILE" -T fields "${FIELDS[@]}"
# Display filter: both print the frame numbers of the packets it selects.
YFILTER='infiniband.bth.opcode in {6..10} and infiniband.reth.dmalen >= 1024 or infiniband.aeth.syndrome & 0x60 == 0x60'
measure rocetap_filter "$RUNS" "$BIN" decode -r "$FILE" -Y "$YFILTER" -T fields -e frame.number
measure tshark_filter "$TSHARK_RUNS" tshark -r "$FILE" -Y "$YFILTER" -T fields -e frame.number

# --- streamed: peak memory of rocetap stats on a long capture ---------------
# gencap writes STREAM_N packets to a pipe (nothing on disk: 10 million
# packets would be about 8.7 GB); rocetap stats reads them from stdin. Peak
# RSS and CPU time are rocetap's alone. `gencap | cat` first gives the pipe
# limit: through a pipe both processes share the two CPUs with the copies.
STREAM_BEST="" STREAM_RSS=0 STREAM_CPU="n/a" STREAM_GEN_CPU="n/a" PIPE_BEST="" STREAM_PKTS=0 STREAM_BYTES=0
if [ "$STREAM_N" -gt 0 ]; then
	gen_timed() { # gencap's CPU time to $OUT/gen.cpu when GNU time is there
		if [ -x /usr/bin/time ]; then
			/usr/bin/time -f '%U %S' -o "$OUT/gen.cpu" "$OUT/gencap" -n "$STREAM_N" -o -
		else
			echo "n/a" >"$OUT/gen.cpu"
			"$OUT/gencap" -n "$STREAM_N" -o -
		fi
	}
	for ((i = 1; i <= STREAM_RUNS; i++)); do
		log "gencap -n $STREAM_N -o - | cat, run $i/$STREAM_RUNS"
		t0=$EPOCHREALTIME
		"$OUT/gencap" -n "$STREAM_N" -o - | cat >/dev/null
		s=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
		if [ -z "$PIPE_BEST" ] || awk -v s="$s" -v b="$PIPE_BEST" 'BEGIN { exit !(s < b) }'; then PIPE_BEST=$s; fi
		log "gencap -n $STREAM_N -o - | rocetap stats -r -, run $i/$STREAM_RUNS"
		t0=$EPOCHREALTIME
		gen_timed | rss_run "$OUT/stream_stats.txt" "$BIN" stats -r -
		t1=$EPOCHREALTIME
		read -r r c <"$OUT/rss"
		s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
		if [ -z "$STREAM_BEST" ] || awk -v s="$s" -v b="$STREAM_BEST" 'BEGIN { exit !(s < b) }'; then
			STREAM_BEST=$s STREAM_CPU=$c
			STREAM_GEN_CPU=$(tail -n 1 "$OUT/gen.cpu" | awk 'NF == 2 { printf "%.2f", $1 + $2; next } { print "n/a" }')
		fi
		[ "$r" -gt "$STREAM_RSS" ] && STREAM_RSS=$r
	done
	# "Packets: N (B bytes), ..." is the first line of the stats report.
	read -r STREAM_PKTS STREAM_BYTES < <(awk 'NR == 1 && $1 == "Packets:" { gsub(/[(]/, "", $3); print $2, $3 }' "$OUT/stream_stats.txt") || true
	STREAM_PKTS=${STREAM_PKTS:-0} STREAM_BYTES=${STREAM_BYTES:-0}
fi

# --- flow tracker micro-benchmark ---------------------------------------------
if [ "$FLOW_BENCH" != 0 ]; then
	log "go test -bench Track ./flow"
	"$GO" test -run XXX -bench Track -benchmem ./flow >"$OUT/gotest-flow.txt" 2>&1 || log "WARNING: go test -bench Track ./flow failed (see $OUT/gotest-flow.txt)"
fi

# --- sanity checks (untimed) -----------------------------------------------
"$BIN" decode -r "$FILE" -Y "$YFILTER" -T fields -e frame.number >"$OUT/filter_rocetap.txt"
tshark -r "$FILE" -Y "$YFILTER" -T fields -e frame.number 2>/dev/null >"$OUT/filter_tshark.txt"
if ! cmp -s "$OUT/filter_rocetap.txt" "$OUT/filter_tshark.txt"; then
	log "WARNING: rocetap and tshark select different packets for the filter"
fi
log "checking ICRCs and the opcode mix"
"$BIN" decode -r "$FILE" -T fields -e infiniband.bth.opcode -e rocetap.icrc.status >"$OUT/all.txt"
PKTS=$(wc -l <"$OUT/all.txt")
icrc_counts=$(cut -f2 "$OUT/all.txt" | sort | uniq -c | awk '{ printf "%s%s %s", sep, $2, $1; sep = ", " }')
icrc_good=$(awk -F'\t' '$2 == "good"' "$OUT/all.txt" | wc -l)
opcode_mix=$(cut -f1 "$OUT/all.txt" | sort -n | uniq -c | awk '
	BEGIN { split("SEND First,SEND Middle,SEND Last,,SEND Only,,RDMA WRITE First,RDMA WRITE Middle,RDMA WRITE Last,,RDMA WRITE Only,,RDMA READ Request,READ Response First,READ Response Middle,READ Response Last,READ Response Only,Acknowledge", name, ",") }
	{ printf "%9d  %3s  RC %s\n", $1, $2, name[$2 + 1] }')
rm -f "$OUT/all.txt"

log "checking rocetap stats, sessions and expert"
"$BIN" stats -r "$FILE" >"$OUT/stats.txt"
stats_pkts=$(awk 'NR == 1 && $1 == "Packets:" { print $2 }' "$OUT/stats.txt")
stats_sessions=$(awk '$1 == "Sessions:" { print $2; exit }' "$OUT/stats.txt")
stats_losses=$(awk '/^  PSN gaps / { gsub(/,/, ""); g += $3; r += $8; d += $10; o += $12 } END { printf "%d PSN gaps, %d retransmissions, %d duplicates, %d out-of-order", g, r, d, o }' "$OUT/stats.txt")
sessions_count=$("$BIN" sessions -r "$FILE" | awk 'NR == 1 && $1 == "Sessions:" { print $2 }')
expert_events=$("$BIN" expert -r "$FILE" | awk 'NR == 1 && $1 == "Expert" { print $3 }')

log "comparing the first $SAMPLE packets with tshark"
"$BIN" decode -r "$FILE" -c "$SAMPLE" -T fields "${FIELDS[@]}" >"$OUT/sample.rocetap.txt"
tshark -r "$FILE" -c "$SAMPLE" -T fields "${FIELDS[@]}" >"$OUT/sample.tshark.txt" 2>>"$OUT/stderr.log"
sample_lines=$(wc -l <"$OUT/sample.rocetap.txt")
if cmp -s "$OUT/sample.rocetap.txt" "$OUT/sample.tshark.txt" && [ "$sample_lines" -eq "$SAMPLE" ]; then
	sample_result="IDENTICAL ($sample_lines lines each)"
	sample_diff=""
else
	ndiff=$(diff "$OUT/sample.rocetap.txt" "$OUT/sample.tshark.txt" | grep -c '^[<>]' || true)
	sample_result="DIFFERENT ($ndiff differing lines in the diff; rocetap $sample_lines lines, tshark $(wc -l <"$OUT/sample.tshark.txt") lines)"
	sample_diff=$(diff "$OUT/sample.rocetap.txt" "$OUT/sample.tshark.txt" | head -n 20 || true)
fi

# --- report ------------------------------------------------------------------
pps() { awk -v n="$PKTS" -v s="$1" 'BEGIN { printf "%.0f", n / s }'; }
mbs() { awk -v b="$SIZE" -v s="$1" 'BEGIN { printf "%.0f", b / s / 1e6 }'; }
mb() { awk -v k="$1" 'BEGIN { if (k > 0) printf "%.0f", k / 1024; else printf "n/a" }'; }
grp() { awk -v n="$1" 'BEGIN { if (n !~ /^[0-9.]+$/) { print n; exit } s = sprintf("%.0f", n); while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9](,|$)/, ",&", s); print s }'; }

ratio_tshark=$(awk -v r="${SECS[rocetap_fields]}" -v t="${SECS[tshark_fields]}" 'BEGIN { printf "%.1f", t / r }')
ratio_cat=$(awk -v r="${SECS[rocetap_fields]}" -v c="${SECS[cat]}" 'BEGIN { printf "%.2f", r / c }')
pass_tshark=$(awk -v x="$ratio_tshark" 'BEGIN { print (x >= 50) ? "PASS" : "FAIL" }')
ratio_filter=$(awk -v r="${SECS[rocetap_filter]}" -v t="${SECS[tshark_filter]}" 'BEGIN { printf "%.1f", t / r }')
pass_filter=$(awk -v x="$ratio_filter" 'BEGIN { print (x >= 50) ? "PASS" : "FAIL" }')
pass_cat=$(awk -v x="$ratio_cat" 'BEGIN { print (x <= 3) ? "PASS" : "FAIL" }')

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain 2>/dev/null | head -n 1)" ]; then commit="$commit (with uncommitted changes)"; fi
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
rss_note="rocetap's peak RSS is far below the file size: it streams the capture rather than holding or mapping it."
if [ "${RSS[rocetap_fields]}" -gt $((SIZE / 2048)) ]; then
	rss_note="rocetap's peak RSS includes the pages of the capture it maps with mmap (about the file size), not only its own memory."
fi
# The analysis path (stats, sessions, expert).
cat_best=$(awk -v a="${SECS[cat]}" -v b="${SECS[cat2]}" 'BEGIN { print (a < b) ? a : b }')
ratio_stats1=$(awk -v r="${SECS[stats_1]}" -v c="$cat_best" 'BEGIN { printf "%.2f", r / c }')
ratio_stats=$(awk -v r="${SECS[stats]}" -v c="$cat_best" 'BEGIN { printf "%.2f", r / c }')
pass_ratio_stats1=$(awk -v x="$ratio_stats1" 'BEGIN { print (x <= 4) ? "PASS" : "FAIL" }')
pass_ratio_stats=$(awk -v x="$ratio_stats" 'BEGIN { print (x <= 4) ? "PASS" : "FAIL" }')
pps_stats1=$(pps "${SECS[stats_1]}")
pps_stats=$(pps "${SECS[stats]}")
pass_pps_stats1=$(awk -v x="$pps_stats1" 'BEGIN { print (x >= 2000000) ? "PASS" : "FAIL" }')
pass_pps_stats=$(awk -v x="$pps_stats" 'BEGIN { print (x >= 2000000) ? "PASS" : "FAIL" }')
# Streamed run: the bytes through the pipe are the pcap file gencap would
# write (24-byte header, 16 bytes per record).
stream_size=$(awk -v n="$STREAM_PKTS" -v b="$STREAM_BYTES" 'BEGIN { printf "%.0f", 24 + 16 * n + b }')
spps() { awk -v n="$STREAM_PKTS" -v s="$1" 'BEGIN { if (s + 0 > 0) printf "%.0f", n / s; else printf "n/a" }'; }
smbs() { awk -v b="$stream_size" -v s="$1" 'BEGIN { if (s + 0 > 0) printf "%.0f", b / s / 1e6; else printf "n/a" }'; }
stream_rss_mib=$(awk -v k="$STREAM_RSS" 'BEGIN { printf "%.1f", k / 1024 }')
pass_stream_rss=$(awk -v k="$STREAM_RSS" -v n="$STREAM_PKTS" -v want="$STREAM_N" 'BEGIN { print (k > 0 && k < 100 * 1024 && n == want) ? "PASS" : "FAIL" }')
# go test -bench Track/rc: ns/op and allocs/op are per packet.
read -r track_ns track_allocs track_bytes < <(awk '$1 ~ /^BenchmarkTrack\/rc-/ { for (i = 2; i <= NF; i++) { if ($i == "ns/op") ns = $(i-1); if ($i == "allocs/op") al = $(i-1); if ($i == "B/op") by = $(i-1) } } END { print (ns == "" ? "n/a" : ns), (al == "" ? "n/a" : al), (by == "" ? "n/a" : by) }' "$OUT/gotest-flow.txt" 2>/dev/null || echo "n/a n/a n/a")
pass_track=$(awk -v a="$track_allocs" 'BEGIN { print (a == "0") ? "PASS" : (a == "n/a" ? "n/a" : "FAIL") }')

# rocetap replay: packets/s over the replay capture's own packet count.
replay_pps="n/a" pass_replay="n/a" replay_ns="n/a" replay_allocs="n/a" pass_replay_allocs="n/a"
if [ "$REPLAY" != 0 ] && [ -n "${SECS[replay]:-}" ]; then
	replay_pps=$(awk -v n="$REPLAY_PKTS" -v s="${SECS[replay]}" 'BEGIN { printf "%.0f", n / s }')
	pass_replay=$(awk -v x="$replay_pps" 'BEGIN { print (x >= 1000000) ? "PASS" : "FAIL" }')
elif [ "$REPLAY" != 0 ]; then
	pass_replay="FAIL"
fi
if [ "$REPLAY" != 0 ]; then
	# go test -bench Replay/rc: ns/op and allocs/op are per packet.
	read -r replay_ns replay_allocs < <(awk '$1 ~ /^BenchmarkReplay\/rc-/ { for (i = 2; i <= NF; i++) { if ($i == "ns/op") ns = $(i-1); if ($i == "allocs/op") al = $(i-1) } } END { print (ns == "" ? "n/a" : ns), (al == "" ? "n/a" : al) }' "$OUT/gotest-replay.txt" 2>/dev/null || echo "n/a n/a")
	pass_replay_allocs=$(awk -v a="$replay_allocs" 'BEGIN { print (a == "0") ? "PASS" : (a == "n/a" ? "n/a" : "FAIL") }')
fi

# Live capture under load (root: it makes network namespaces and a veth
# pair): rocetap capture and dumpcap, side by side.
CAPBENCH_STATUS="skipped (CAPBENCH=0)"
if [ "$CAPBENCH" != 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		CAPBENCH_STATUS="skipped: it needs root (network namespaces, AF_PACKET)"
	else
		log "live capture load test on a veth pair (internal/tools/capbench)"
		CAPBENCH_STATUS=0
		"$GO" run ./internal/tools/capbench -rocetap "$BIN" -o "$OUT/capbench.md" 2>"$OUT/capbench.log" || CAPBENCH_STATUS=$?
	fi
fi

# rocetap tui on a 10-million-packet capture, beside termshark and tshark
# (bench/tui.sh writes its section to $OUT/tui.md).
TUI_STATUS="skipped (TUI=0)"
if [ "$TUI" != 0 ]; then
	log "rocetap tui (bench/tui.sh)"
	TUI_STATUS=0
	OUT="$OUT" BIN="$BIN" GO="$GO" bash bench/tui.sh >/dev/null 2>>"$OUT/stderr.log" || TUI_STATUS=$?
fi

total_secs=$(awk -v a="$t_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')

row() { # key label
	printf '| %s | %s | %s | %s | %s | %s |\n' "$2" "${SECS[$1]}" "$(grp "$(pps "${SECS[$1]}")")" "$(mbs "${SECS[$1]}")" "$(mb "${RSS[$1]}")" "${CPU[$1]}"
}

{
	echo "# rocetap speed benchmark"
	echo
	echo "Generated by \`bash bench/run.sh\` (\`make bench\`); see bench/README.md."
	echo
	echo "- Date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "- Machine: $(nproc) CPUs, $cpu, $mem RAM, Linux $(uname -r)"
	echo "- rocetap: commit $commit, $("$GO" version | cut -d' ' -f3-)"
	echo "- tshark: $(tshark --version 2>/dev/null | head -n 1)"
	echo "- Capture: \`$FILE\`, $(grp "$PKTS") packets, $(grp "$SIZE") bytes ($(awk -v b="$SIZE" 'BEGIN { printf "%.1f", b / 1e6 }') MB), classic pcap, Ethernet/IPv4/UDP 4791, RC RDMA WRITE/READ/SEND with 1 KiB payloads and ACKs over 8 QP pairs; generated by \`$OUT/gencap -n $N -o $FILE\`, $gen_note"
	echo "- Method: page cache warmed with \`cat\` first; output to /dev/null; best of $RUNS runs for cat and rocetap, $TSHARK_RUNS run(s) for tshark; wall time from bash \$EPOCHREALTIME; peak RSS from $RSS_TOOL; CPU s is user+sys time of the best run (above the wall time when a tool uses several cores)"
	echo "- Whole benchmark run (bench/run.sh): ${total_secs} s; load average (1/5/15 min) $load_start at the start, $load_end at the end (other processes on the machine skew the timings)"
	echo
	echo "## Commands"
	echo
	echo '```sh'
	echo "${CMDS[cat]}"
	echo "${CMDS[rocetap_fields]}"
	echo "${CMDS[tshark_fields]}"
	echo "${CMDS[rocetap_summary]}"
	echo "${CMDS[rocetap_icrc]}"
	echo "${CMDS[rocetap_filter]}"
	echo "${CMDS[tshark_filter]}"
	echo '```'
	echo
	echo "## Results"
	echo
	echo "| tool | seconds | packets/s | MB/s | peak RSS MB | CPU s (user+sys) |"
	echo "|---|---:|---:|---:|---:|---:|"
	row cat "cat (I/O limit)"
	row rocetap_fields "rocetap decode -T fields (4 fields)"
	row tshark_fields "tshark -T fields (4 fields)"
	row rocetap_summary "rocetap decode (summary lines, ICRC checked)"
	row rocetap_icrc "rocetap decode -T fields (4 fields + rocetap.icrc.status: ICRC checked)"
	row rocetap_filter "rocetap decode -Y FILTER -T fields -e frame.number"
	row tshark_filter "tshark -Y FILTER -T fields -e frame.number"
	echo
	echo "| ratio | value | target | result |"
	echo "|---|---:|---:|---|"
	echo "| rocetap / tshark, packets/s (-T fields) | ${ratio_tshark}× | ≥ 50× | **$pass_tshark** |"
	echo "| rocetap time / cat time (-T fields) | ${ratio_cat}× | ≤ 3× | **$pass_cat** |"
	echo "| rocetap / tshark, packets/s (-Y filter) | ${ratio_filter}× | ≥ 50× | **$pass_filter** |"
	echo
	echo "Filter: \`$YFILTER\`; rocetap and tshark select $(wc -l <"$OUT/filter_rocetap.txt") and $(wc -l <"$OUT/filter_tshark.txt") packets."
	echo
	echo "$rss_note"
	echo
	echo "## Sanity checks"
	echo
	echo "- rocetap ICRC status over the whole file: $icrc_counts ($icrc_good of $PKTS good)"
	echo "- First $SAMPLE packets, \`-T fields ${FIELDS[*]}\`, rocetap vs tshark (\`-c $SAMPLE\`, diff): **$sample_result**"
	if [ -n "$sample_diff" ]; then
		echo
		echo '```diff'
		echo "$sample_diff"
		echo '```'
	fi
	echo
	echo "Opcode mix (count, infiniband.bth.opcode):"
	echo
	echo '```'
	echo "$opcode_mix"
	echo '```'
	echo
	echo "## rocetap stats, sessions, expert"
	echo
	echo "These commands read, decode (ICRC checked) and track every packet in capture order (internal/cli/sequential.go): on one goroutine with GOMAXPROCS=1, else with a reader goroutine beside the one that decodes and tracks. Same capture, same method (best of $RUNS); \`cat\` was timed again just before them and the ratios use the faster of the two \`cat\` rows ($cat_best s)."
	echo
	echo '```sh'
	echo "${CMDS[cat2]}"
	echo "${CMDS[stats_1]}"
	echo "${CMDS[stats]}"
	echo "${CMDS[sessions]}"
	echo "${CMDS[expert]}"
	echo '```'
	echo
	echo "| tool | seconds | packets/s | MB/s | peak RSS MB | CPU s (user+sys) |"
	echo "|---|---:|---:|---:|---:|---:|"
	row cat2 "cat (again, before stats)"
	row stats_1 "rocetap stats, GOMAXPROCS=1"
	row stats "rocetap stats, default GOMAXPROCS ($(nproc))"
	row sessions "rocetap sessions, default GOMAXPROCS"
	row expert "rocetap expert, default GOMAXPROCS"
	echo
	if [ "$STREAM_N" -gt 0 ]; then
		echo "Streamed, nothing on disk: \`$OUT/gencap -n $STREAM_N -o - | $BIN stats -r -\` (best of $STREAM_RUNS; $(grp "$STREAM_PKTS") packets, $(grp "$stream_size") bytes through the pipe). Peak RSS and CPU are rocetap's; gencap used ${STREAM_GEN_CPU} CPU s. Both processes and the pipe copies share the $(nproc) CPUs: the first row (\`gencap | cat\`) is the most the pipe carries here, so a wall time close to it means the pipe, not rocetap, is the limit; packets per rocetap CPU-second is rocetap's own rate."
		echo
		echo "| pipeline | seconds | packets/s | MB/s | peak RSS MB (rocetap) | rocetap CPU s | packets per rocetap CPU s |"
		echo "|---|---:|---:|---:|---:|---:|---:|"
		echo "| gencap \| cat (pipe limit) | $PIPE_BEST | $(grp "$(spps "$PIPE_BEST")") | $(smbs "$PIPE_BEST") | | | |"
		echo "| gencap \| rocetap stats -r - | $STREAM_BEST | $(grp "$(spps "$STREAM_BEST")") | $(smbs "$STREAM_BEST") | $stream_rss_mib | $STREAM_CPU | $(grp "$(spps "$STREAM_CPU")") |"
		echo
	fi
	echo "| target | value | target | result |"
	echo "|---|---:|---:|---|"
	echo "| rocetap stats packets/s, one core (GOMAXPROCS=1) | $(grp "$pps_stats1") | ≥ 2,000,000 | **$pass_pps_stats1** |"
	echo "| rocetap stats packets/s, default GOMAXPROCS (for information) | $(grp "$pps_stats") | ≥ 2,000,000 | **$pass_pps_stats** |"
	echo "| rocetap stats time / cat time, GOMAXPROCS=1 | ${ratio_stats1}× | ≤ 4× | **$pass_ratio_stats1** |"
	echo "| rocetap stats time / cat time, default GOMAXPROCS | ${ratio_stats}× | ≤ 4× | **$pass_ratio_stats** |"
	if [ "$STREAM_N" -gt 0 ]; then
		echo "| rocetap stats peak RSS, $(grp "$STREAM_N") packets streamed | $stream_rss_mib MiB | < 100 MiB | **$pass_stream_rss** |"
	fi
	if [ "$FLOW_BENCH" != 0 ]; then
		echo "| flow Tracker.Track, steady state (BenchmarkTrack/rc) | $track_ns ns/packet, $track_allocs allocs/packet | 0 allocs | **$pass_track** |"
	fi
	echo
	echo "Sanity: \`rocetap stats\` counted $(grp "${stats_pkts:-0}") packets (the file has $(grp "$PKTS")) in ${stats_sessions:-?} sessions (\`rocetap sessions\`: ${sessions_count:-?}), with $stats_losses; \`rocetap expert\`: ${expert_events:-?} events (gencap writes a clean stream: 0 expected)."
	if [ "$STREAM_N" -gt 0 ]; then
		echo "The streamed run counted $(grp "$STREAM_PKTS") packets (want $(grp "$STREAM_N"))."
	fi
	if [ "$FLOW_BENCH" != 0 ] && [ -f "$OUT/gotest-flow.txt" ]; then
		echo
		echo "From $OUT/gotest-flow.txt (\`go test -run XXX -bench Track -benchmem ./flow\`; one op is one packet, see flow/bench_test.go):"
		echo
		echo '```'
		cat "$OUT/gotest-flow.txt"
		echo '```'
	fi
	if [ "$REPLAY" != 0 ]; then
		echo
		echo "## rocetap replay"
		echo
		echo "\`rocetap replay\` reads, decodes (ICRC checked) and, in capture order, feeds every request to the reference HCA model (hca.Model.Receive: MPT checks, MTT translation, 1 KiB writes and reads of emulated memory) and pairs and compares every response the responder sent (replay/). Capture: \`$REPLAY_FILE\`, $(grp "$REPLAY_PKTS") packets, $(grp "$REPLAY_SIZE") bytes, the benchmark traffic with every QP pair between one requester and one responder (\`$OUT/gencap -n $N -o $REPLAY_FILE -mpt $REPLAY_MPT\`, $replay_gen_note; READ data consistent with the WRITEs, so the replay must find no divergence). Same method (best of $RUNS); replay reads on the goroutine that decodes and replays (internal/cli/replay.go)."
		echo
		echo '```sh'
		echo "${CMDS[replay]:-$BIN replay -r $REPLAY_FILE --mpt $REPLAY_MPT > /dev/null (not timed: exit status $REPLAY_STATUS)}"
		echo '```'
		echo
		echo "| tool | seconds | packets/s | MB/s | peak RSS MB | CPU s (user+sys) |"
		echo "|---|---:|---:|---:|---:|---:|"
		if [ -n "${SECS[replay]:-}" ]; then
			echo "| rocetap replay | ${SECS[replay]} | $(grp "$replay_pps") | $(awk -v b="$REPLAY_SIZE" -v s="${SECS[replay]}" 'BEGIN { printf "%.0f", b / s / 1e6 }') | $(mb "${RSS[replay]}") | ${CPU[replay]} |"
		fi
		echo
		echo "| target | value | target | result |"
		echo "|---|---:|---:|---|"
		echo "| rocetap replay packets/s | $(grp "$replay_pps") | ≥ 1,000,000 | **$pass_replay** |"
		echo "| replay feed+align, steady state (BenchmarkReplay/rc: model and aligner, no I/O or decoding) | $replay_ns ns/packet, $replay_allocs allocs/packet | 0 allocs | **$pass_replay_allocs** |"
		echo
		echo "Sanity: exit status $REPLAY_STATUS; \`$REPLAY_VERDICT\` (0 divergences expected)."
		if [ -f "$OUT/gotest-replay.txt" ]; then
			echo
			echo "From $OUT/gotest-replay.txt (\`go test -run XXX -bench Replay -benchmem ./replay\`; one op is one packet, see replay/bench_test.go):"
			echo
			echo '```'
			cat "$OUT/gotest-replay.txt"
			echo '```'
		fi
	fi
	echo
	echo "## Live capture on a veth pair"
	echo
	if [ "$CAPBENCH_STATUS" = 0 ]; then
		echo "\`go run ./internal/tools/capbench -rocetap $BIN\` (run as root) makes two network namespaces joined by a veth pair, sends RoCEv2 frames from one end with an AF_PACKET socket at rising rates (1 s of traffic per rate: 25k, 50k, 100k, then every 50k up to 400k packets/s, then as fast as the sender goes), while the tool captures the other end into a pcapng file on tmpfs (\`rocetap capture -i IF -w FILE -q\`; \`dumpcap -i IF -f 'udp dst port 4791 or ether proto 0x8915' -w FILE -q\`, the capture engine behind \`tshark -i\`), then stops it with SIGINT and counts the frames in the file. A rate is loss-free when the file holds every frame sent. The sender, the veth pair and the tool share the 2 CPUs, so the sender's top rate (about 300k packets/s here) caps what can be shown. CPU is the tool's user+sys time at its highest loss-free rate, per million packets captured. The last column also counts the frames the kernel dropped from a full input backlog (/proc/net/softnet_stat) before any capture saw them: losses no capture tool can avoid."
		echo
		cat "$OUT/capbench.md"
		echo
		echo "Per trial: $OUT/capbench.log."
	else
		echo "Not run: $CAPBENCH_STATUS$( [ -f "$OUT/capbench.log" ] && echo "; see $OUT/capbench.log")."
	fi
	echo
	echo "## rocetap tui"
	echo
	if [ "$TUI_STATUS" = 0 ] && [ -f "$OUT/tui.md" ]; then
		cat "$OUT/tui.md"
	else
		echo "Not run: $TUI_STATUS (see $OUT/stderr.log)."
	fi
	if [ -f bench/out/gotest.txt ]; then
		echo
		echo "## go test -bench"
		echo
		echo "From bench/out/gotest.txt (\`go test -run XXX -bench . -benchmem ./decode ./decode/filter ./capture ./internal/printer\`):"
		echo
		echo '```'
		cat bench/out/gotest.txt
		echo '```'
	fi
} >"$RESULTS"

log "wrote $RESULTS in ${total_secs} s"
printf 'rocetap %s pkt/s, tshark %s pkt/s, cat %s pkt/s; rocetap/tshark %s× (%s), rocetap/cat %s× (%s)\n' \
	"$(pps "${SECS[rocetap_fields]}")" "$(pps "${SECS[tshark_fields]}")" "$(pps "${SECS[cat]}")" \
	"$ratio_tshark" "$pass_tshark" "$ratio_cat" "$pass_cat"
printf 'stats %s pkt/s on one core (%s), %s pkt/s default; stats/cat %s× / %s× (%s / %s); peak RSS %s MiB on %s streamed packets (%s); Track %s ns/pkt, %s allocs/pkt (%s)\n' \
	"$pps_stats1" "$pass_pps_stats1" "$pps_stats" "$ratio_stats1" "$ratio_stats" "$pass_ratio_stats1" "$pass_ratio_stats" \
	"$stream_rss_mib" "$STREAM_PKTS" "$pass_stream_rss" "$track_ns" "$track_allocs" "$pass_track"
if [ "$REPLAY" != 0 ]; then
	printf 'replay %s pkt/s (%s); %s; feed+align %s ns/pkt, %s allocs/pkt (%s)\n' \
		"$replay_pps" "$pass_replay" "$REPLAY_VERDICT" "$replay_ns" "$replay_allocs" "$pass_replay_allocs"
fi
if [ "$TUI" != 0 ]; then
	if [ "$TUI_STATUS" = 0 ]; then cat "$OUT/tui.summary"; else echo "rocetap tui section: exit $TUI_STATUS"; fi
fi
if [ "$CAPBENCH" != 0 ]; then
	if [ "$CAPBENCH_STATUS" = 0 ]; then
		echo "live capture on a veth pair (highest loss-free packets/s):"
		sed -n '3,$p' "$OUT/capbench.md"
	else
		echo "live capture load test: $CAPBENCH_STATUS"
	fi
fi
