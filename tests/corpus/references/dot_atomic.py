"""result + a . b: one atomicAdd of each block's partial dot product into the accumulator."""


def reference(a, b, result):
    return result + (a * b).sum(dim=0, keepdim=True)
