"""One sum per block of 256 consecutive elements; the grid (64 x 256) covers 16384 elements, so the
input is padded with zeros past n (the last blocks sum a partial block, or nothing)."""
import torch


def reference(x, n, blocks, threads):
    padding = (x[:1] * 0.0).expand(blocks * threads - n)
    return torch.cat([x, padding]).view(blocks, threads).sum(dim=1)
