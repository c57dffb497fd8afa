"""What perf/compare's sections share: running commands, weft-perf's and the baselines' sweeps
and their output, busbw, and the report's number formats."""

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

RUN_TIMEOUT = 1800  # seconds for any one command


def say(text):
    print(text, file=sys.stderr, flush=True)


def human(nbytes):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if nbytes >= 1 << shift and nbytes % (1 << shift) == 0:
            return f"{nbytes >> shift}{unit}"
    return str(nbytes)


def parse_size(text):
    """An argparse type: 8, 64K, 1.5M, 256M (powers of 1024)."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KkMmGg]?)", text.strip())
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 8, 64K, 256M)")
    unit = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()]
    return int(float(m.group(1)) * unit)


class Runner:
    """Runs commands, logs them with their output, and stops stragglers on timeout."""

    def __init__(self, log_path):
        self.log = open(log_path, "w")
        self.failures = []

    def run(self, cmd, env=None, timeout=RUN_TIMEOUT, what=None):
        """Returns (ok, stdout). A failure is recorded with the end of its output."""
        self.log.write(f"\n$ {' '.join(cmd)}\n")
        self.log.flush()
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # our own process group only
            out, err = proc.communicate()
            code = f"timeout after {timeout} s"
        except BaseException:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        self.log.write(out + err + f"# exit {code}, {time.monotonic() - start:.1f} s\n")
        self.log.flush()
        if code != 0:
            tail = "\n    ".join((err or out).strip().splitlines()[-6:])
            self.fail(f"{what or cmd[0]}: exit {code}\n    {tail}")
            return False, out
        return True, out

    def fail(self, text):
        self.failures.append(text)
        say(f"FAILED: {text}")


def bus_factor(coll, n):
    """weft-perf's busbw factors; algbw is size / time for every collective it measures."""
    if coll == "all_reduce":
        return 2 * (n - 1) / n
    if coll in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    return 1.0


def busbw(coll, n, size, time_us):
    return size / (time_us * 1e3) * bus_factor(coll, n) if time_us > 0 else 0.0


def sweep_flags(coll, lo, hi, factor, iters, warmup):
    """The flags of one sweep, for weft-perf and the baselines alike: -a 3 reports the slowest
    rank's mean, the usual time of a collective (weft-perf's default is nccl-tests' average)."""
    return [coll, "-b", str(lo), "-e", str(hi), "-f", str(factor), "-n", str(iters),
            "-w", str(warmup), "-c", "1", "-a", "3"]


def parse_weft_perf(text):
    """weft-perf's nccl-tests table: {size: (out-of-place time_us, wrong elements out of place
    and in place)}."""
    rows = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 9 and f[0].isdigit():
            rows[int(f[0])] = (float(f[5]), sum(int(x) for x in f[8:13:4] if x.isdigit()))
    return rows


def parse_baseline(text):
    """mpi-perf / gloo-perf lines (size count time_us algbw busbw wrong, and with --percentiles
    p50 p99 max): {size: (time_us, wrong)}."""
    rows = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) in (6, 9) and f[0].isdigit():
            rows[int(f[0])] = (float(f[2]), max(0, int(f[5])))
    return rows


def median(values):
    return statistics.median(values) if values else None


def fmt(value, width, digits=2):
    return f"{value:{width}.{digits}f}" if value is not None else f"{'-':>{width}}"


def fmt_ratio(value, width):
    """Two or three significant digits: 0.45, 1.52, 12.3, 480."""
    if value is None:
        return f"{'-':>{width}}"
    return fmt(value, width, 2 if value < 10 else 1 if value < 100 else 0)


def verdict(points, unit):
    """A target's verdict over (label, value, need) points: met, or where it missed and by how
    much, with the point furthest below its need (or closest to it)."""
    if not points:
        return "no data"
    worst = min(points, key=lambda p: p[1] / p[2])
    misses = sum(1 for p in points if p[1] < p[2])
    head = "met" if not misses else f"missed at {misses} of {len(points)}"
    # One more digit where the rounded value would hide a miss (1.497x is not 1.50x).
    extra = 1 if worst[1] < worst[2] and round(worst[1], 2) >= worst[2] else 0
    value = f"{100 * worst[1]:.{extra}f}%" if unit == "%" else f"{worst[1]:.{2 + extra}f}x"
    return f"{head}, worst {value} at {worst[0]}"


def sweep_bands(lo, hi, factor, tops):
    """The sizes lo, lo*factor, ... up to hi, cut into bands by tops [(largest size, iters,
    warmup)]: [(first size, last size, iters, warmup)] for each band that holds any."""
    sizes, s = [], lo
    while s <= hi:
        sizes.append(s)
        s *= factor
    out = []
    for top, iters, warmup in tops:
        mine = [x for x in sizes if x <= top and (not out or x > out[-1][1])]
        if mine:
            out.append((mine[0], mine[-1], iters, warmup))
    return out


def checked_rows(runner, ok, out, weft, what):
    """The rows of a finished sweep's output (weft-perf's table if weft, else a baseline's),
    with a failure recorded where a run that succeeded printed none or any came out wrong."""
    rows = parse_weft_perf(out) if weft else parse_baseline(out)
    if ok and not rows:
        runner.fail(f"{what}: no results in its output")
    for size, (_, wrong) in rows.items():
        if wrong:
            runner.fail(f"{what}: {wrong} wrong elements at {size} B")
    return rows


def netns_unavailable(tools):
    """Why network namespaces cannot be made here with `tools` (None if they can)."""
    if os.geteuid() != 0:
        return "not root (network namespaces need it)"
    for tool in ["ip"] + list(tools):
        if shutil.which(tool) is None:
            return f"{tool} is missing"
    if subprocess.run(["ip", "netns", "list"], capture_output=True).returncode != 0:
        return "ip netns does not work here"
    return None


def write_results_csv(path, results, count_name):
    """results[(lib, coll, count, size)] = [(round, time_us, busbw)], every round and the
    medians; count_name heads the count's column (ranks, hosts)."""
    with open(path, "w") as f:
        f.write(f"round,library,collective,{count_name},size_bytes,time_us,busbw_GBps\n")
        for (lib, coll, n, size), got in sorted(results.items()):
            for r, t, bus in got:
                f.write(f"{r},{lib},{coll},{n},{size},{t},{bus}\n")
            f.write(f"median,{lib},{coll},{n},{size},{median([g[1] for g in got])},"
                    f"{median([g[2] for g in got])}\n")
