"""Rotary position embedding, GPT-J layout: dimensions 2i and 2i + 1 rotate together.
q is [tokens, heads, head_dim]; cos_cache and sin_cache are [max_pos, head_dim/2]."""
import torch


def reference(q, positions, cos_cache, sin_cache):
    cos = cos_cache.index_select(0, positions).unsqueeze(1)
    sin = sin_cache.index_select(0, positions).unsqueeze(1)
    x1 = q[:, :, 0::2]
    x2 = q[:, :, 1::2]
    rotated = torch.stack([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
    return rotated.flatten(-2)
