"""Blocks of 256; every block but the last copies its elements; the last block (starting at
`last_start`) averages each element with its mirror in the block, buf[255 - t], where elements
past n count as 0. With n = 1000 and 4 blocks: out[i] = 0.5 * (x[i] + x[1791 - i]) when
1791 - i < n, else 0.5 * x[i]."""


def reference(x, n, last_start, threads):
    out = x.clone()
    for i in range(last_start, n):
        mirror = 2 * last_start + threads - 1 - i
        if mirror < n:
            out[i] = 0.5 * (x[i] + x[mirror])
        else:
            out[i] = 0.5 * x[i]
    return out
