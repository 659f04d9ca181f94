"""LayerNorm over the last dimension with the biased variance (what F.layer_norm computes)."""
import torch


def reference(x, weight, bias, eps):
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, unbiased=False)
    return (x - mean) * torch.rsqrt(var + eps) * weight + bias
