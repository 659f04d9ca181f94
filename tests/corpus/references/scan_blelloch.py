"""Exclusive prefix sums restarting at every block of 512 elements."""


def reference(x):
    blocks = x.view(-1, 512)
    return (blocks.cumsum(dim=1) - blocks).flatten()
