"""c = a + b."""


def reference(a, b):
    return a + b
