"""Matrix product of row-major A (M x K) and B (K x N)."""


def reference(a, b):
    return a @ b
