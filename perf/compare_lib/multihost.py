"""perf/compare's multi-host section: weft over tcp and over UCX against Open MPI over tcp (ob1
with its tcp btl) and over UCX (its ucx pml), across simulated hosts. The hosts are network
namespaces joined by a bridge (tests/multihost/netns-hosts), one rank on each, so every byte
between ranks crosses a veth pair and the bridge; each library starts its ranks with its own
launcher through the namespaces' remote shell, as it would with ssh between machines. Rounds
interleave the libraries, as the main tables do.

UCX runs over its tcp transport on the hosts' one interface, for weft and Open MPI alike: the
bridge is all there is to cross here (on InfiniBand or RoCE, UCX would take the RDMA device)."""

import os
import secrets
import shutil
import subprocess

from compare_lib.common import (RUN_TIMEOUT, busbw, checked_rows, fmt, fmt_ratio, human,
                                median, netns_unavailable, say, sweep_bands, sweep_flags, verdict)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tests", "multihost", "netns-hosts")
COLLS = ["all_reduce", "all_gather"]
LIBS = ["weft-tcp", "weft-ucx", "mpi-tcp", "mpi-ucx"]
MIN, MAX = 64 << 10, 256 << 20
QUICK_MAX = 4 << 20
# (largest size, iters, warmup), the same for every library; the veth moves about 1-3 GB/s.
BANDS = [(4 << 20, 20, 5), (1 << 62, 5, 2)]
QUICK_BANDS = [(1 << 62, 5, 1)]
DEVICE = "eth0"  # each host's one interface (netns-hosts)
UCX_ENV = {"UCX_TLS": "tcp,self", "UCX_NET_DEVICES": DEVICE}
# Targets (issue 39), as (label, library, the one it is held against, need).
TARGETS = [("weft tcp busbw >= Open MPI tcp", "weft-tcp", "mpi-tcp", 1.0),
           ("weft UCX >= 90% of weft tcp", "weft-ucx", "weft-tcp", 0.9)]


def unavailable(bins, build_dir, cache_value):
    """Why the section cannot run here ('' if it can), and the libraries it can run."""
    why = netns_unavailable(["unshare"])
    if why:
        return why, []
    libs = ["weft-tcp"]
    if cache_value(build_dir, "WEFT_ENABLE_UCX") == "ON" and \
            cache_value(build_dir, "UCX_FOUND") == "1":
        libs.append("weft-ucx")
    else:
        say("multi-host: weft was built without UCX: no weft-ucx (install libucx-dev)")
    if shutil.which("mpirun") and os.access(bins["mpi-perf"], os.X_OK):
        libs += ["mpi-tcp", "mpi-ucx"]
    else:
        say("multi-host: no mpirun or mpi-perf: no Open MPI columns")
    return "", libs


class Hosts:
    """netns-hosts' set of n hosts; removed on exit, also after errors and signals."""

    def __init__(self, n):
        self.n = n
        self.name = f"wcmp{os.getpid() % 100000}"

    def __enter__(self):
        subprocess.run([TOOL, "up", self.name, str(self.n)], check=True)
        return self

    def __exit__(self, *exc):
        subprocess.run([TOOL, "down", self.name], check=False)

    def host(self, i):
        return f"{self.name}-h{i}"

    def slots(self):
        """One rank on each host, as the launchers' host lists have it."""
        return ",".join(f"{self.host(i)}:1" for i in range(self.n))

    def rsh(self):
        return f"{TOOL} rsh {self.name}"


def lib_command(args, bins, hosts, lib, flags):
    """The command that runs one sweep of lib across hosts, and its environment."""
    if lib.startswith("weft-"):
        # Rank 0 is on host 0, which answers at netns-hosts' first address.
        port = 29500 + secrets.randbelow(2000)
        env = dict(os.environ, WEFT_NET=lib[len("weft-"):])
        cmd = ([bins["weft-run"], "--hosts", hosts.slots(), "--rsh", hosts.rsh(),
                "--comm-id", f"10.78.0.1:{port}", "--no-prefix", "--timeout", str(RUN_TIMEOUT)] +
               [w for k, v in UCX_ENV.items() for w in ("-x", f"{k}={v}")] +
               ["--", bins["weft-perf"]] + flags + args.weft_args.split())
        return cmd, env
    # mpirun on host 0 (its own host, by name); orted on the others through the remote shell.
    if lib == "mpi-tcp":
        transport = ["--mca", "pml", "ob1", "--mca", "btl", "tcp,self",
                     "--mca", "btl_tcp_if_include", DEVICE]
    else:
        # Its ucx pml takes only InfiniBand-class devices unless told otherwise.
        transport = ["--mca", "pml", "ucx", "--mca", "pml_ucx_tls", "any",
                     "--mca", "pml_ucx_devices", "any", "--mca", "btl", "self"]
        for k, v in UCX_ENV.items():
            transport += ["-x", f"{k}={v}"]
    # Unbound: each host's orted would bind its rank to the host's core 0, which here is the
    # same core for every host (8 ms time slices, 50x slower); on real hosts binding is free.
    # And where the simulated hosts' ranks outnumber the cores, yielding while idle, as Open MPI
    # does by itself where it sees a host oversubscribed (busy-polling ranks took 10-100x as
    # long at 3 hosts on 2 cores).
    if hosts.n > (os.cpu_count() or 1):
        transport += ["--mca", "mpi_yield_when_idle", "1"]
    cmd = ([TOOL, "exec", hosts.name, "0", "mpirun", "--allow-run-as-root", "--bind-to", "none",
            "-np", str(hosts.n),
            "--host", hosts.slots(), "--mca", "plm_rsh_agent", hosts.rsh(),
            "--mca", "oob_tcp_if_include", DEVICE] + transport + [bins["mpi-perf"]] + flags)
    return cmd, dict(os.environ)


def sweep(runner, args, bins, hosts, lib, flags):
    cmd, env = lib_command(args, bins, hosts, lib, flags)
    what = f"multi-host {lib} {flags[0]} {hosts.n} hosts {flags[2]}..{flags[4]}"
    ok, out = runner.run(cmd, env=env, what=what)
    return checked_rows(runner, ok, out, lib.startswith("weft-"), what)


def run(runner, args, bins, libs, watch):
    """Every round: for each host count, collective and size band, the libraries back to back
    (a different one first each round). Returns results[(lib, coll, hosts, size)] =
    [(round, time_us, busbw)]."""
    results = {}
    top, factor, bands = (QUICK_MAX, 4, QUICK_BANDS) if args.quick else (MAX, 2, BANDS)
    for n in args.host_counts:
        with Hosts(n) as hosts:
            for r in range(args.rounds):
                order = libs[r % len(libs):] + libs[:r % len(libs)]
                for coll in COLLS:
                    for lo, hi, iters, warmup in sweep_bands(MIN, top, factor, bands):
                        flags = sweep_flags(coll, lo, hi, factor, iters, warmup)
                        say(f"multi-host round {r + 1}/{args.rounds}: {coll} {n} hosts "
                            f"{human(lo)}..{human(hi)}: {' '.join(order)}")
                        for lib in order:
                            what = f"round {r + 1}: {lib} {coll} {n} hosts {human(lo)}..{human(hi)}"
                            rows = watch.steady(
                                what, lambda: sweep(runner, args, bins, hosts, lib, flags))
                            for size, (t, _) in rows.items():
                                results.setdefault((lib, coll, n, size), []).append(
                                    (r + 1, t, busbw(coll, n, size, t)))
    return results


def medians(results, lib, coll, n, size):
    got = results.get((lib, coll, n, size), [])
    return median([g[1] for g in got]), median([g[2] for g in got])


def ratio(results, a, b, coll, n, size):
    """a's busbw over b's (b's median time over a's), or None without both."""
    ta, tb = medians(results, a, coll, n, size)[0], medians(results, b, coll, n, size)[0]
    return tb / ta if ta and tb else None


def report(args, results):
    """One table per (collective, hosts) with the ratios the targets use, then the targets."""
    libs = [x for x in LIBS if any(k[0] == x for k in results)]
    ratios = [(a, b) for _, a, b, _ in TARGETS if a in libs and b in libs]
    if "weft-ucx" in libs and "mpi-ucx" in libs:
        ratios.append(("weft-ucx", "mpi-ucx"))
    lines = []
    for coll in COLLS:
        for n in args.host_counts:
            sizes = sorted({k[3] for k in results if k[1:3] == (coll, n)})
            if not sizes:
                continue
            lines.append(f"\n{coll} across {n} hosts (network namespaces on a bridge, one rank "
                         f"each): float32 sum, medians of {args.rounds} round(s); busbw in GB/s, "
                         "time in us")
            head = f"{'size':>6} |" + "".join(f" {x + ' busbw':>14} {'time':>9} |" for x in libs)
            head += "".join(f" {a[len('weft-'):] + '/' + b:>12}" for a, b in ratios)
            lines += [head, "-" * len(head)]
            for size in sizes:
                row = f"{human(size):>6} |"
                for lib in libs:
                    t, bus = medians(results, lib, coll, n, size)
                    row += f" {fmt(bus, 14, 3)} {fmt(t, 9, 0 if t and t >= 10000 else 1)} |"
                for a, b in ratios:
                    row += f" {fmt_ratio(ratio(results, a, b, coll, n, size), 12)}"
                lines.append(row)
    lines.append("\nratios A/B: A's busbw over B's (B's time over A's). weft-ucx and mpi-ucx: UCX "
                 f"over its tcp transport ({', '.join(f'{k}={v}' for k, v in UCX_ENV.items())}); "
                 "mpi-tcp: ob1 with the tcp btl.")
    lines.append("\nmulti-host targets (issue 39), on this run's medians, 64K up")
    for coll in COLLS:
        for n in args.host_counts:
            for label, a, b, need in TARGETS:
                if a not in libs or b not in libs:
                    continue
                pts = []
                for size in sorted({k[3] for k in results if k[1:3] == (coll, n)}):
                    r = ratio(results, a, b, coll, n, size)
                    if r:
                        pts.append((human(size), r, need))
                lines.append(f"  {coll} {n} hosts: {label:<32} {verdict(pts, 'x')}")
    return lines
