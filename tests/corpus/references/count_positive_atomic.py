"""count + (number of x > 0) and total + (sum of the positive x): the kernel's atomics add into
the existing accumulators."""
import torch


def reference(x, count, total):
    positive = x > 0.0
    new_count = count + positive.sum(dim=0, keepdim=True).to(count.dtype)
    new_total = total + torch.where(positive, x, x * 0.0).sum(dim=0, keepdim=True)
    return new_count, new_total
