# shellcheck shell=bash
# Measuring code shared by bench/run.sh and bench/ab.sh (source it from the
# repository root, with OUT set to the scratch directory).
#
# A command is the name of a bash array that holds it, so arguments with
# spaces (display filters) survive. interleave runs several commands RUNS
# times each, round-robin (A B A B …), so that a slow minute on a shared
# machine hits every command alike; each run appends one line to its
# samples file (bench/rusage.py):
#
#   WALL_S CPU_S MAXRSS_KIB EXIT
#
# and med, mmm and peak read a column of it.

[ -n "${OUT:-}" ] || { echo "bench/lib.sh: OUT not set" >&2; exit 1; }
mkdir -p "$OUT/samples"

# samples NAME CORES: the samples file of command NAME run on CORES (1 or all).
samples() { printf '%s/samples/%s.%s' "$OUT" "$1" "$2"; }

# run_once SAMPLES CORES CMD...: one run, stdout to /dev/null, stderr to
# $OUT/stderr.log; CORES=1 pins it to CPU 0 with taskset (Go then sets
# GOMAXPROCS to 1 and runs its GC on that core too), all leaves it free.
run_once() {
	local file=$1 cores=$2
	shift 2
	if [ "$cores" = 1 ]; then set -- taskset -c 0 "$@"; fi
	/usr/bin/python3 bench/rusage.py "$file" "$@" >/dev/null 2>>"$OUT/stderr.log" || true
}

# spread_binaries N PATH...: makes N copies of each program PATH, which
# interleave then runs in turn, copy r in run r, wherever a command names
# PATH. The same binary, byte for byte, runs at different speeds from
# different copies of its file: rocetap decode -T fields on the main
# capture took 0.136 to 0.148 CPU s (medians of 7 interleaved runs, one
# core, 2026-11-27) from six copies of one build (cat bin/rocetap >
# COPY), each copy's runs within a few per cent of each other: where the
# page cache put the file's pages (its code and tables) decides it, once
# per copy. Timed from one copy, a command's median carries one draw of
# that; timed from a copy a run, it is the median over the draws, as the
# noise of the machine is. Each copy is written anew (cat), so that the
# page cache places it anew; they live in $OUT/copies, which the bench
# makes, and removes at its end (remove_copies; a run that stops early
# leaves them, and the next replaces them). Only interleave's runs use
# them: a profile or a run a script starts itself runs PATH.
declare -A BIN_COPY=()
COPIES=0
COPY_DIR=$OUT/copies
spread_binaries() {
	local n=$1 k i=0 p src
	shift
	made_here "$COPY_DIR" "$COPY_DIR/.bench" || exit 1
	rm -rf "$COPY_DIR"
	mkdir -p "$COPY_DIR"
	: >"$COPY_DIR/.bench"
	for p; do
		i=$((i + 1))
		BIN_COPY[$p]=$i.$(basename "$p")
		src=$p
		[ -e "$src" ] || src=$(command -v -- "$p") || {
			echo "bench: $p: no such program" >&2
			exit 1
		}
		for ((k = 1; k <= n; k++)); do
			mkdir -p "$COPY_DIR/$k"
			cat "$src" >"$COPY_DIR/$k/${BIN_COPY[$p]}"
			chmod +x "$COPY_DIR/$k/${BIN_COPY[$p]}"
		done
	done
	COPIES=$n
}

# remove_copies: removes spread_binaries' copies.
remove_copies() {
	if [ -f "$COPY_DIR/.bench" ]; then rm -rf "$COPY_DIR"; fi
	COPIES=0
}

# interleave RUNS CORES NAME...: runs each named command RUNS times,
# round-robin, on CORES; the samples files start empty. A word of a
# command that names a program spread_binaries copied is, in run r, its
# copy r (modulo the number of copies).
interleave() {
	local runs=$1 cores=$2 r name i
	shift 2
	local -a cmd
	for name; do : >"$(samples "$name" "$cores")"; done
	for ((r = 1; r <= runs; r++)); do
		for name; do
			eval "cmd=(\"\${${name}[@]}\")"
			if [ "$COPIES" -gt 0 ]; then
				for i in "${!cmd[@]}"; do
					if [ -n "${cmd[i]}" ] && [ -n "${BIN_COPY[${cmd[i]}]+x}" ]; then
						cmd[i]=$COPY_DIR/$(((r - 1) % COPIES + 1))/${BIN_COPY[${cmd[i]}]}
					fi
				done
			fi
			printf '== %s, cores: %s, run %d/%d\n' "$name" "$cores" "$r" "$runs" >&2
			run_once "$(samples "$name" "$cores")" "$cores" "${cmd[@]}"
		done
	done
}

# cmdline NAME: the command NAME as one shell-quoted line.
cmdline() {
	local -a cmd
	eval "cmd=(\"\${${1}[@]}\")"
	local s
	s=$(printf '%q ' "${cmd[@]}")
	printf '%s' "${s% }"
}

# med FILE COL: the median of column COL.
med() {
	sort -g -k"$2","$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END {
		if (NR == 0) { print "n/a"; exit }
		printf "%.6f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# mmm FILE COL [DIGITS]: "median (min–max)" of column COL.
mmm() {
	sort -g -k"$2","$2" "$1" | awk -v c="$2" -v d="${3:-2}" '{ v[NR] = $c } END {
		if (NR == 0) { print "n/a"; exit }
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		f = "%." d "f (%." d "f–%." d "f)"
		printf f, m, v[1], v[NR] }'
}

# pair_mm A B COL: "min–max" of the ratios of run i's column COL in A
# to run i's in B (the files' lines are in run order: interleave's A B A
# B … makes run i of each a pair, taken seconds apart), or n/a, also when
# the files' lines differ in number (a run that wrote none would pair
# the runs after it wrongly). How far the ratio moves from pair to pair
# shows what a ratio of medians near its target is worth.
pair_mm() {
	if [ "$(wc -l <"$1")" != "$(wc -l <"$2")" ]; then
		echo "n/a"
		return
	fi
	paste -d' ' <(awk -v c="$3" '{ print $c }' "$1") <(awk -v c="$3" '{ print $c }' "$2") |
		awk '$2 + 0 > 0 { r = $1 / $2; if (n == 0 || r < lo) lo = r; if (n == 0 || r > hi) hi = r; n++ }
			END { if (n == 0) print "n/a"; else printf "%.2f–%.2f", lo, hi }'
}

# made_here FILE MARKER: whether FILE is the bench's to replace: absent,
# or with MARKER beside it, which the bench writes when it has made FILE
# (its .meta). Else it says so and fails: OUT is scratch, but a user may
# set it to any directory, and a capture of theirs there is not the
# bench's to overwrite (gencap -force, scapygen) or remove.
made_here() {
	if [ -e "$1" ] && [ ! -f "$2" ]; then
		echo "bench: $1 exists and the bench did not make it (no $2): move it, or set OUT to another directory" >&2
		return 1
	fi
}

# peak FILE: the largest peak RSS of the runs, in MiB (peak_kib: in
# KiB, as measured).
peak() { awk '$3 > m { m = $3 } END { printf "%.0f", m / 1024 }' "$1"; }
peak_kib() { awk '$3 > m { m = $3 } END { printf "%d", m }' "$1"; }

# failed FILE: how many runs exited non-zero.
failed() { awk '$4 != 0 { n++ } END { print n + 0 }' "$1"; }

# div A B [DIGITS]: A / B, or n/a.
div() { awk -v a="$1" -v b="$2" -v d="${3:-2}" 'BEGIN { if (a ~ /^[0-9.e+-]+$/ && b + 0 > 0) printf "%." d "f", a / b; else print "n/a" }'; }

# grp N: N rounded, with thousands separators.
grp() { awk -v n="$1" 'BEGIN { if (n !~ /^[0-9.e+]+$/) { print n; exit } s = sprintf("%.0f", n); while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9](,|$)/, ",&", s); print s }'; }

# cpu_mark FILE: writes "BUSY STEAL OWN" to FILE, in CPU seconds so far:
# the machine's busy time (user, nice, system, irq, softirq of every core,
# /proc/stat), the time the hypervisor ran other guests on this machine's
# cores (steal), and this shell's own and its waited-for children's
# (the builtin times, run in this shell: in a $(…) subshell it would see
# only the subshell; a locale's decimal comma is read as a point). BUSY - OWN between two marks is what everything
# else used meanwhile: other processes, and the kernel's own threads.
cpu_mark() {
	times >"$1.times"
	awk -v hz="$(getconf CLK_TCK)" '
		FNR == NR { for (i = 1; i <= NF; i++) { gsub(/,/, ".", $i); split($i, a, /[ms]/); own += a[1] * 60 + a[2] }; next }
		$1 == "cpu" { printf "%.2f %.2f %.2f\n", ($2 + $3 + $4 + $7 + $8) / hz, $9 / hz, own; exit }
	' "$1.times" /proc/stat >"$1"
	rm -f "$1.times"
}

# other_load START END WALL_S: one sentence on what else ran between two
# cpu_marks WALL_S seconds apart, and whether the numbers are quiet.
other_load() {
	awk -v w="$3" -v n="$(nproc)" '
		FNR == 1 && NR == 1 { b0 = $1; s0 = $2; o0 = $3; next }
		{ other = ($1 - b0) - ($3 - o0); steal = $2 - s0 }
		END {
			pct = w > 0 ? 100 * other / w : 0
			st = w > 0 ? 100 * steal / (w * n) : 0
			# (the two counts come from different clocks, /proc/stat in
			# ticks and rusage: a difference this small is none)
			used = other < 0.1 ? "less than 0.1 CPU s" : sprintf("%.1f CPU s, %.1f%% of one core on average", other, pct)
			printf "while it ran, processes other than the bench'"'"'s commands (and the kernel'"'"'s own threads) used %s; the hypervisor ran other guests for %.1f%% of this machine'"'"'s core time (steal).", used, st
			if (pct > 10) printf " **Other jobs were running**: the numbers are noisy, wall times more than CPU times; min–max shows by how much."
			else printf " The cores were otherwise idle; min–max shows the noise."
		}
	' "$1" "$2"
}

# machine: one line naming the CPU, cores, RAM, kernel and Go.
machine() {
	printf '%s cores (%s), %s RAM, Linux %s, %s' "$(nproc)" \
		"$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)" \
		"$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)" \
		"$(uname -r)" "$("${GO:-go}" env GOVERSION)"
}
