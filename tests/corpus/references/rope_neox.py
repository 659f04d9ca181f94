"""In-place rotary embedding, GPT-NeoX layout: q [tokens, heads, head_size]; each row of
cos_sin_cache is [cos (head_size/2) | sin (head_size/2)] for one position."""
import torch


def reference(q, positions, cos_sin_cache):
    cos, sin = cos_sin_cache.index_select(0, positions).unsqueeze(1).chunk(2, dim=-1)
    x1, x2 = q.chunk(2, dim=-1)
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
