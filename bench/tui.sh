#!/usr/bin/env bash
# TUI benchmark: rocetap tui on a generated capture of TUI_N packets
# (default 10,000,000, about 8.7 GB), beside termshark and tshark.
# bench/run.sh runs it (TUI=0 skips it) and puts its section in
# bench/RESULTS.md; alone, from the repository root:
#
#   bash bench/tui.sh                  # writes bench/out/tui.md
#   TUI_N=1000000 TUI_TSHARK=0 bash bench/tui.sh
#
# Environment: TUI_N (packets), TUI_FILTER (the display filter timed),
# TUI_TSHARK (0 skips tshark's two passes over the file: minutes),
# TUI_TERMSHARK (0 skips termshark), TUI_PAINT_TIMEOUT (seconds to wait for
# a first row under tmux, default 120), GO, OUT (scratch directory, default
# bench/out), BIN (default bin/rocetap). Writes $OUT/tui.md (the section)
# and $OUT/tui.summary (one line).
set -euo pipefail

cd "$(dirname "$0")/.."
TUI_N=${TUI_N:-10000000}
TUI_FILTER=${TUI_FILTER:-infiniband.bth.opcode == 17}
TUI_TSHARK=${TUI_TSHARK:-1}
TUI_TERMSHARK=${TUI_TERMSHARK:-1}
TUI_PAINT_TIMEOUT=${TUI_PAINT_TIMEOUT:-120}
GO=${GO:-go}
OUT=${OUT:-bench/out}
BIN=${BIN:-bin/rocetap}
FILE=$OUT/tui.pcap
MD=$OUT/tui.md
SUMMARY=$OUT/tui.summary
BYTES_PER_PACKET=869 # gencap's frames and pcap record headers, on average

mkdir -p "$OUT"
# shellcheck source=bench/lib.sh
. bench/lib.sh # (made_here, grp; this script's own log below is its)
log() { printf '== tui: %s\n' "$*" >&2; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
apt_install() { $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1; }

if [ ! -x "$BIN" ]; then
	log "building $BIN"
	"$GO" build -o "$BIN" ./cmd/rocetap
fi
command -v tmux >/dev/null || { log "installing tmux"; apt_install tmux || true; }

# --- capture -------------------------------------------------------------------
"$GO" build -o "$OUT/gencap" ./internal/tools/gencap
gen_hash=$(cat internal/tools/gencap/*.go | sha256sum | cut -c1-16)
reuse=""
if [ -f "$FILE" ] && [ -f "$FILE.meta" ]; then
	read -r m_n m_gen m_size <"$FILE.meta" || true
	if [ "$m_gen" = "gencap=$gen_hash" ] && [ "$m_size" = "bytes=$(stat -c %s "$FILE")" ] && [ "${m_n#n=}" -ge "$TUI_N" ]; then
		reuse=yes
		TUI_N=${m_n#n=}
	fi
fi
size_note=""
if [ -z "$reuse" ]; then
	made_here "$FILE" "$FILE.meta" || exit 1
	rm -f "$FILE" "$FILE.meta"
	avail=$(df -B1 --output=avail "$OUT" | tail -n 1)
	fit=$(((avail - (2 << 30)) / BYTES_PER_PACKET / 100000 * 100000))
	if [ "$fit" -lt "$TUI_N" ]; then
		size_note=" (${TUI_N} packets asked for, but only $(grp "$fit") fit on the disk: $(grp "$avail") bytes free, 2 GiB kept free)"
		log "only $fit packets fit on the disk"
		TUI_N=$fit
	fi
	log "generating $FILE with $TUI_N packets"
	t0=$EPOCHREALTIME
	"$OUT/gencap" -force -n "$TUI_N" -o "$FILE"
	gen_note="generated in $(secs "$t0" "$EPOCHREALTIME") s"
	echo "n=$TUI_N gencap=$gen_hash bytes=$(stat -c %s "$FILE")" >"$FILE.meta"
else
	gen_note="reused from an earlier run ($FILE.meta matched)"
	log "reusing $FILE ($TUI_N packets)"
fi
SIZE=$(stat -c %s "$FILE")
log "warming the page cache"
cat "$FILE" >/dev/null

# --- rocetap tui, in-process ----------------------------------------------------------
log "tuibench (in-process, simulation screen)"
"$GO" build -o "$OUT/tuibench" ./internal/tools/tuibench
declare -A TB
TB_STATUS=0
"$OUT/tuibench" -r "$FILE" -filter "$TUI_FILTER" >"$OUT/tuibench.txt" 2>"$OUT/tuibench.err" || TB_STATUS=$?
while IFS='=' read -r k v; do TB[$k]=$v; done <"$OUT/tuibench.txt"
tb() { echo "${TB[$1]:-n/a}"; }

# --- first paint in a terminal (tmux) --------------------------------------------------
# first_paint CMD: seconds from starting CMD in a 160x45 tmux pane until
# the pane shows a packet row (number, then time; polled every 10 ms), or
# n/a.
first_paint() {
	local sock="rocetap-bench-$$" t0 t1="" deadline
	command -v tmux >/dev/null || { echo "n/a"; return; }
	t0=$EPOCHREALTIME
	tmux -L "$sock" -f /dev/null new-session -d -s b -x 160 -y 45 -e TERM=screen-256color "$1"
	deadline=$(awk -v a="$t0" -v s="$TUI_PAINT_TIMEOUT" 'BEGIN { printf "%.0f", a + s }')
	while :; do
		if tmux -L "$sock" capture-pane -p -t b 2>/dev/null | grep -qE '^[│║ ]*[0-9]+ +[0-9]+\.[0-9]{6} '; then
			t1=$EPOCHREALTIME
			break
		fi
		[ "${EPOCHREALTIME%.*}" -ge "$deadline" ] && break
		sleep 0.01
	done
	tmux -L "$sock" capture-pane -p -t b >"$OUT/first_paint.pane" 2>/dev/null || true
	tmux -L "$sock" kill-server 2>/dev/null || true
	if [ -n "$t1" ]; then secs "$t0" "$t1"; else echo "n/a"; fi
}
log "first paint under tmux: rocetap tui"
paint_rocetap=$(first_paint "$BIN tui $FILE")
cp "$OUT/first_paint.pane" "$OUT/first_paint.rocetap.pane"
paint_termshark="not run (TUI_TERMSHARK=0)"
termshark_version=""
if [ "$TUI_TERMSHARK" != 0 ]; then
	command -v termshark >/dev/null || { log "installing termshark"; apt_install termshark || true; }
	if command -v termshark >/dev/null; then
		termshark_version=$(dpkg-query -W -f='termshark ${Version}' termshark 2>/dev/null || true)
		log "first paint under tmux: termshark"
		paint_termshark=$(first_paint "termshark -r $FILE")
		cp "$OUT/first_paint.pane" "$OUT/first_paint.termshark.pane"
		sleep 1 # its tshark children end with the pane
	else
		paint_termshark="n/a (termshark could not be installed)"
	fi
fi

# --- tshark: the whole file, and the filter ----------------------------------------------
tshark_read="not run (TUI_TSHARK=0)" tshark_filter="not run (TUI_TSHARK=0)" tshark_shown=""
if [ "$TUI_TSHARK" != 0 ] && command -v tshark >/dev/null; then
	log "tshark -r (the whole file)"
	t0=$EPOCHREALTIME
	tshark -r "$FILE" >/dev/null 2>>"$OUT/stderr.log"
	tshark_read=$(secs "$t0" "$EPOCHREALTIME")
	log "tshark -r -Y"
	t0=$EPOCHREALTIME
	tshark_shown=$(tshark -r "$FILE" -Y "$TUI_FILTER" 2>>"$OUT/stderr.log" | wc -l)
	tshark_filter=$(secs "$t0" "$EPOCHREALTIME")
fi

# --- report ---------------------------------------------------------------------------
pass_paint=$(awk -v x="$(tb first_paint_s)" 'BEGIN { if (x !~ /^[0-9.]+$/) print "FAIL"; else print (x < 0.5) ? "PASS" : "FAIL" }')
pass_row1=$(awk -v x="$(tb row1_s)" 'BEGIN { if (x !~ /^[0-9.]+$/) print "FAIL"; else print (x < 0.5) ? "PASS" : "FAIL" }')
# The index keeps 32-byte entries in chunks of 65,536 allocated whole: the
# last chunk's unused entries (at most 2 MiB) are allowed on top.
excess=$(awk -v b="$(tb index_bytes_per_packet)" -v n="$(tb packets)" 'BEGIN { if (b !~ /^[0-9.]+$/) print "n/a"; else printf "%.0f", (b - 32) * n }')
pass_mem=$(awk -v e="$excess" 'BEGIN { if (e !~ /^-?[0-9]+$/) print "FAIL"; else print (e <= 2 * 1048576 + 262144) ? "PASS" : "FAIL" }')
{
	echo "\`bash bench/tui.sh\` (internal/tools/tuibench and tmux). Capture: \`$FILE\`, $(grp "$(tb packets)") packets, $(grp "$SIZE") bytes, gencap's traffic (\`$OUT/gencap -n $TUI_N -o $FILE\`, $gen_note)$size_note; page cache warmed with \`cat\` first. Filter: \`$TUI_FILTER\`."
	echo
	echo "In-process (\`$OUT/tuibench -r $FILE\`): the UI as \`rocetap tui\` sets it up (tracker, sessions and expert views, Build in the background with a Notify every 200 ms) on a tcell simulation screen of 160x45 whose Show records the time of the first screen with packet rows, of the first with packet 1 at the top of the list, and of the first with \"shown: N\" after the Enter that applies the filter typed into the bar. Heap figures are HeapAlloc after a GC, before and after, over the packet count. Under tmux: the time from starting the command in a 160x45 pane until \`tmux capture-pane\` (polled every 10 ms) shows a packet row, the same method for both tools; the process start and the terminal are included."
	echo
	echo "| measure | rocetap tui | termshark / tshark | target | result |"
	echo "|---|---:|---:|---:|---|"
	echo "| time to first paint, in-process (OpenIndex → first screen with packet rows) | $(tb first_paint_s) s (its first row: packet $(grp "$(tb first_paint_row)")) | | < 0.5 s | **$pass_paint** |"
	echo "| packet 1 at the top of the list, in-process (OpenIndex → that screen) | $(tb row1_s)$([ "$(tb row1_s)" = never ] || echo " s") | | < 0.5 s | **$pass_row1** |"
	echo "| time to first paint, in a tmux pane | $paint_rocetap s | termshark${termshark_version:+ (${termshark_version#termshark })}: $paint_termshark s | | |"
	echo "| time until fully indexed (read, decoded, tracked) | $(tb indexed_s) s | tshark -r FILE > /dev/null (Wireshark's whole pass): $tshark_read s | | |"
	echo "| index alone (no tracker): time to build | $(tb index_s) s | | | |"
	echo "| index memory per packet (index alone) | $(tb index_bytes_per_packet) bytes | | ≤ 32 bytes (+ the last 65,536-entry chunk, 2 MiB) | **$pass_mem** |"
	echo "| heap per packet with the tracker and the UI | $(tb heap_bytes_per_packet) bytes | | | |"
	echo "| filter over all packets (Enter → \"shown: N\" drawn) | $(tb filter_s) s, $(grp "$(tb filter_shown)") shown | tshark -r FILE -Y: $tshark_filter s${tshark_shown:+, $(grp "$tshark_shown") shown} | | |"
	echo
	if [ "$TB_STATUS" != 0 ]; then
		echo "tuibench failed (exit $TB_STATUS): \`$(head -c 500 "$OUT/tuibench.err" | tr '\n' ' ')\`"
		echo
	fi
	if [ "$(tb row1_s)" = never ]; then
		echo "The list follows the end of the capture while it is indexed (tview's Table keeps showing its last rows when they were in view, as they are before the first packet is indexed): the first screen shows packets near the end of what was indexed by then, and packet 1, although selected (the details show it), never comes into view by itself."
		echo
	fi
	echo "termshark reads the capture through \`tshark -T psml\` and shows rows as they come; the tshark rows are Wireshark's own passes over the file (one run each), the work behind termshark's full load and its filter. First screens under tmux: $OUT/first_paint.rocetap.pane, $OUT/first_paint.termshark.pane."
} >"$MD"
printf 'tui: first paint %s s in-process (%s; packet 1 shown: %s, %s), %s s in tmux (termshark %s s); indexed in %s s (tshark -r %s s); index %s bytes/packet (%s); filter %s s (tshark -Y %s s)\n' \
	"$(tb first_paint_s)" "$pass_paint" "$(tb row1_s)" "$pass_row1" "$paint_rocetap" "$paint_termshark" "$(tb indexed_s)" "$tshark_read" \
	"$(tb index_bytes_per_packet)" "$pass_mem" "$(tb filter_s)" "$tshark_filter" | tee "$SUMMARY"
