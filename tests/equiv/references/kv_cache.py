"""Paged KV-cache write: key [tokens, heads, head_dim] into a cache laid out
[num_blocks, heads, block_size, head_dim] at the slots slot_mapping (slot = block * block_size + offset).
The cache is updated in place by the kernel, so the reference returns the updated copy."""


def reference(key, key_cache, slot_mapping, num_blocks, block_size, heads, head_dim):
    by_slot = key_cache.permute(0, 2, 1, 3).reshape(num_blocks * block_size, heads, head_dim).clone()
    by_slot[slot_mapping] = key
    return by_slot.view(num_blocks, block_size, heads, head_dim).permute(0, 2, 1, 3)
