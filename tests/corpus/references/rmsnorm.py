"""RMSNorm over the hidden dimension."""
import torch.nn.functional as F


def reference(x, weight, eps, hidden):
    return F.rms_norm(x, [hidden], weight, eps)
