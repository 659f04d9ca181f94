"""count + the number of x above the threshold: every warp adds its count with an atomicAdd."""
import torch


def reference(x, count, threshold):
    return count + (x > threshold).to(torch.int32).sum(dim=0, keepdim=True)
