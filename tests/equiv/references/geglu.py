"""GeGLU with the tanh GELU, as an nn.Module (the binding names no function: the only module's forward)."""
import torch.nn as nn
import torch.nn.functional as F


class GeGLU(nn.Module):
    def forward(self, x):
        gate, up = x.chunk(2, dim=-1)
        return F.gelu(gate, approximate="tanh") * up
