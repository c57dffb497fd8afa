"""Weft, collective communication for CPU clusters and GPUs.

`import weft.torch` registers Weft as the torch.distributed backend "weft"."""
