"""KV-cache scatter (flat layout): the key and value rows of token t go to slot slot_mapping[t]
(slots are injective and in range, so no padding token occurs); both caches are updated in place."""


def reference(key, value, key_cache, value_cache, slot_mapping):
    new_keys = key_cache.clone()
    new_values = value_cache.clone()
    new_keys[slot_mapping] = key
    new_values[slot_mapping] = value
    return new_keys, new_values
