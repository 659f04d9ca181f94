"""int4 -> f16: byte i holds weight 2i in its low nibble and 2i + 1 in its high nibble, zero point 8,
one f16 scale per group of group_size weights; products are rounded to f16."""
import torch


def reference(packed, scales, group_size):
    wide = packed.to(torch.int32)
    q = torch.stack([wide % 16, wide // 16], dim=1).flatten() - 8
    w = q.float().view(-1, group_size) * scales.float().unsqueeze(1)
    return w.flatten().to(torch.float16)
