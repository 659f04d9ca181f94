"""C = A @ B, row-major."""


def reference(a, b):
    return a @ b
