"""LayerNorm over the last dimension (biased variance)."""
import torch.nn.functional as F


def reference(x, weight, bias, eps, d):
    return F.layer_norm(x, [d], weight, bias, eps)
