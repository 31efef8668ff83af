#!/usr/bin/python3
"""One timed run, for bench/lib.sh: rusage.py SAMPLES CMD [ARG...]

Runs CMD (stdin, stdout and stderr inherited) and appends one line to the
file SAMPLES:

    WALL_S CPU_S MAXRSS_KIB EXIT

WALL_S is the time from just before the fork to the return of wait4, CPU_S
the child's user + system time from wait4's rusage (microseconds, where GNU
time prints hundredths: the fast rocetap runs take tens of milliseconds),
MAXRSS_KIB its peak resident set. The rusage covers CMD and the children it
waited for (taskset and prlimit exec the command, so it is the command's
own). EXIT is the exit status, or 128+N for signal N. This script's own exit
status is CMD's.
"""

import os
import sys
import time


def main():
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    samples, argv = sys.argv[1], sys.argv[2:]
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        except OSError as e:
            sys.stderr.write("rusage.py: %s: %s\n" % (argv[0], e))
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        code = 128 - code
    with open(samples, "a") as f:
        f.write("%.6f %.6f %d %d\n" % (wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, code))
    return code


if __name__ == "__main__":
    sys.exit(main())
