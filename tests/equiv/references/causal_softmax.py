"""Causal softmax of a (q_len x k_len) score matrix whose queries are the last q_len positions:
row i sees keys 0 .. i + k_len - q_len; the rest get probability 0."""
import torch


def reference(scores, q_len, k_len):
    probs = scores.clone()
    for i in range(q_len):
        visible = i + k_len - q_len + 1
        probs[i, :visible] = torch.softmax(scores[i, :visible], dim=-1)
        probs[i, visible:] = scores[i, visible:] * 0.0
    return probs
