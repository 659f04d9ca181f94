"""y = a * x + y (y is updated in place by the kernel)."""


def reference(a, x, y):
    return a * x + y
