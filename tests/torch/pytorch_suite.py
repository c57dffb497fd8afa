"""PyTorch's own distributed tests (torch.testing._internal.distributed.distributed_test, shipped
with Debian's python3-torch) over weft as a plugin backend, as PyTorch's
test/distributed/test_distributed_spawn.py runs them for gloo; BACKEND=gloo runs the same for
comparison.

    BACKEND=weft WORLD_SIZE=2 PYTHONPATH=<build>/python /usr/bin/python3 pytorch_suite.py [-k ...]
"""

import os
import sys

# torch.testing._internal imports expecttest, which Debian lacks: our stand-in (shims/).
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "shims"))
os.environ.setdefault("BACKEND", "weft")
os.environ.setdefault("WORLD_SIZE", "2")

from torch.testing._internal.common_distributed import DistTestCases  # noqa: E402

if os.environ["BACKEND"] == "weft":
    import weft.torch  # noqa: F401 (registers the backend, in the spawned ranks too)
    for feature in ("plugin", "ddp", "subgroup"):
        DistTestCases.backend_feature[feature].add("weft")

from torch.testing._internal.common_utils import run_tests  # noqa: E402
from torch.testing._internal.distributed.distributed_test import (  # noqa: E402
    DistributedTest, TestDistBackend)


class TestDistBackendWithSpawn(TestDistBackend, DistributedTest._DistTestBase):
    def setUp(self):
        super().setUp()
        self._spawn_processes()


if __name__ == "__main__":
    run_tests()
