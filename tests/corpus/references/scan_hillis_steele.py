"""Inclusive prefix sums restarting at every block of 512 elements (elements past n count as 0)."""
import torch


def reference(x, n, blocks, threads):
    padding = (x[:1] * 0.0).expand(blocks * threads - n)
    scanned = torch.cat([x, padding]).view(blocks, threads).cumsum(dim=1)
    return scanned.flatten()[:n]
