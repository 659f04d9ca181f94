"""Rotary position embedding, GPT-NeoX layout: dimension i rotates with dimension i + head_dim/2.
q is [tokens, heads, head_dim]; cos_cache and sin_cache are [max_pos, head_dim/2]."""
import torch


def reference(q, positions, cos_cache, sin_cache):
    cos = cos_cache.index_select(0, positions).unsqueeze(1)
    sin = sin_cache.index_select(0, positions).unsqueeze(1)
    x1, x2 = q.chunk(2, dim=-1)
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
