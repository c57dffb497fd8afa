"""Weft as a torch.distributed backend for CPU tensors.

    import weft.torch
    torch.distributed.init_process_group("weft", ...)

Importing this module registers the backend "weft". The ranks meet through the store of
whatever init method torch uses (env://, tcp://, file://, torchrun's); the group's timeout
becomes Weft's deadline for every call (WEFT_TIMEOUT), so a dead or stuck rank raises a
RuntimeError on the others instead of hanging.
"""

import atexit

import torch.distributed as dist

from weft._torch_backend import ProcessGroupWeft, _drain_all

__all__ = ["ProcessGroupWeft"]

if not hasattr(dist.Backend, "WEFT"):
    # torch calls it as (store, rank, size, timeout), the constructor's arguments.
    dist.Backend.register_backend("weft", ProcessGroupWeft)

# A group's worker may still be letting go of a finished call's future (whose callbacks are
# Python objects) when the interpreter begins to shut down; it then could not take the GIL.
atexit.register(_drain_all)
