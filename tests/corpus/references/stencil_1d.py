"""7-point box sum with zero padding: out[i] = x[i-3] + .. + x[i+3]."""
import torch


def reference(x, n):
    zeros = x[:3] * 0.0
    padded = torch.cat([zeros, x, zeros])
    return padded[0:n] + padded[1:n + 1] + padded[2:n + 2] + padded[3:n + 3] + padded[4:n + 4] + padded[5:n + 5] + padded[6:n + 6]
