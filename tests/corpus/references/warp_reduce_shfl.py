"""sum + x.sum(): every warp adds its total to the accumulator with an atomicAdd."""


def reference(x, total):
    return total + x.sum(dim=0, keepdim=True)
