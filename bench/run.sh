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
# compared field by field with tshark, default 10000), OUT (scratch
# directory, default bench/out), RESULTS (default bench/RESULTS.md).
set -euo pipefail

cd "$(dirname "$0")/.."
t_start=$EPOCHREALTIME
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

N=${N:-1000000}
RUNS=${RUNS:-3}
TSHARK_RUNS=${TSHARK_RUNS:-1}
SAMPLE=${SAMPLE:-10000}
GO=${GO:-go}
OUT=${OUT:-bench/out}
FILE=$OUT/bench.pcap
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

log "warming the page cache"
cat "$FILE" >/dev/null

# --- timing ------------------------------------------------------------------
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
		r=0 c=""
		t0=$EPOCHREALTIME
		if [ -x /usr/bin/time ]; then
			/usr/bin/time -f '%M %U %S' -o "$OUT/rss" "$@" >/dev/null 2>>"$OUT/stderr.log"
			t1=$EPOCHREALTIME
			read -r r c < <(tail -n 1 "$OUT/rss" | awk '{ printf "%d %.2f\n", $1, $2 + $3 }')
		elif command -v python3 >/dev/null; then
			python3 -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%d %.2f\n" % (u.ru_maxrss, u.ru_utime + u.ru_stime))
sys.exit(rc)' "$OUT/rss" "$@" 2>>"$OUT/stderr.log"
			t1=$EPOCHREALTIME
			read -r r c <"$OUT/rss"
		else
			"$@" >/dev/null 2>>"$OUT/stderr.log"
			t1=$EPOCHREALTIME
		fi
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
measure tshark_fields "$TSHARK_RUNS" tshark -r "$FILE" -T fields "${FIELDS[@]}"
# Display filter: both print the frame numbers of the packets it selects.
YFILTER='infiniband.bth.opcode in {6..10} and infiniband.reth.dmalen >= 1024 or infiniband.aeth.syndrome & 0x60 == 0x60'
measure rocetap_filter "$RUNS" "$BIN" decode -r "$FILE" -Y "$YFILTER" -T fields -e frame.number
measure tshark_filter "$TSHARK_RUNS" tshark -r "$FILE" -Y "$YFILTER" -T fields -e frame.number

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
grp() { awk -v n="$1" 'BEGIN { s = sprintf("%d", n); while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9](,|$)/, ",&", s); print s }'; }

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
