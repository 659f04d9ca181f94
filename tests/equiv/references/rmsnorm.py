"""RMSNorm over the last dimension: x / sqrt(mean(x^2) + eps) * weight."""
import torch


def reference(x, weight, eps):
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * weight
