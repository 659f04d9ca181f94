"""Inclusive prefix sums restarting at every warp (32 elements); elements past n count as 0."""
import torch


def reference(x, n, threads_total):
    padding = (x[:1] * 0.0).expand(threads_total - n)
    scanned = torch.cat([x, padding]).view(-1, 32).cumsum(dim=1)
    return scanned.flatten()[:n]
