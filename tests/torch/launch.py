"""Starts the ranks of a torch.distributed job as separate processes and collects how each ended."""

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(case, world, init="env", timeout=300, extra_env=None):
    """Runs tests/torch/worker.py CASE in `world` processes, the group formed through `init`
    (env, tcp or file). Returns [(exit code, output)] by rank; ranks still running after
    `timeout` seconds are killed and get the code None."""
    port = free_port()
    tmp = tempfile.mkdtemp(prefix="weft-torch-")
    procs = []
    for rank in range(world):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WEFT_TEST_INIT=init,
                   WEFT_TEST_TMP=tmp)
        env.update(extra_env or {})
        procs.append(subprocess.Popen([sys.executable, os.path.join(HERE, "worker.py"), case],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True, start_new_session=True))
    deadline = time.monotonic() + timeout
    results = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=max(1, deadline - time.monotonic()))
            results.append((p.returncode, out))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
            results.append((None, out))
    return results
