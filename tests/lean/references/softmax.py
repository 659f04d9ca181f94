"""Softmax over the last dimension."""
import torch.nn.functional as F


def reference(x):
    return F.softmax(x, dim=-1)
