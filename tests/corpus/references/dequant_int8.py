"""w = q * scales[i // group_size] (per-group symmetric int8)."""


def reference(q, scales, group_size):
    return (q.float().view(-1, group_size) * scales.unsqueeze(1)).flatten()
