"""bins + the 256-bin histogram of the bytes in data (the kernel adds into the existing bins)."""
import torch


def reference(data, bins):
    wide = bins.to(torch.int64)
    bin_ids = (wide * 0 + 1).cumsum(dim=0) - 1                # 0, 1, .., 255
    counts = (data.to(torch.int64).unsqueeze(1) == bin_ids.unsqueeze(0)).sum(dim=0)
    return (wide + counts).to(bins.dtype)
