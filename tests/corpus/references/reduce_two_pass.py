"""The two kernels of reduce_two_pass.cu.

sum_partials: 120 blocks of 256 threads stride over x (grid stride 30720), so partial b is the sum
of the x[i] with (i mod 30720) // 256 == b; x is padded with zeros to whole grid strides.
sum_final: the sum of the num_partials partials."""
import torch


def sum_partials(x, n, blocks, threads):
    stride = blocks * threads
    rounds = (n + stride - 1) // stride
    padding = (x[:1] * 0.0).expand(rounds * stride - n)
    grid = torch.cat([x, padding]).view(rounds, blocks, threads)
    return grid.sum(dim=2).sum(dim=0)


def sum_final(partials):
    return partials.sum(dim=0, keepdim=True)
