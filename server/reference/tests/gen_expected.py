#!/usr/bin/env python3
"""Runs every fixture of fixtures/cases.toml in real PyTorch (float64) and writes the inputs and
the expected outputs to fixtures/expected.json, which the Rust tests read (CI has no torch).

    python3 -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch
    /tmp/torchenv/bin/python server/reference/tests/gen_expected.py

Inputs are multiples of 1/8 (exact in every float format), drawn from a generator seeded by
the case name, so regenerating gives the same file.
"""

import hashlib
import inspect
import json
import pathlib
import random
import tomllib

import torch

HERE = pathlib.Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"

# Everything in float64: `torch.zeros(...)` and Python floats then stay at double precision.
torch.set_default_dtype(torch.float64)

# LARK's contract: casts between float types are the identity (exact arithmetic). Run them as
# float64 so that `x.float()` in a reference does not round the expected values to f32.
_FLOAT_TYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_original_to = torch.Tensor.to


def _to_float64(self, *args, **kwargs):
    args = tuple(torch.float64 if a in _FLOAT_TYPES else a for a in args)
    if kwargs.get("dtype") in _FLOAT_TYPES:
        kwargs["dtype"] = torch.float64
    return _original_to(self, *args, **kwargs)


torch.Tensor.to = _to_float64
torch.Tensor.float = torch.Tensor.half = torch.Tensor.bfloat16 = lambda self, *a, **k: _original_to(self, torch.float64)


def make_inputs(case):
    rng = random.Random(int(hashlib.sha256(case["name"].encode()).hexdigest()[:16], 16))
    values, tensors = [], []
    for arg in case["args"]:
        if "shape" in arg:
            count = 1
            for s in arg["shape"]:
                count *= s
            if "values" in arg:
                flat = [float(v) for v in arg["values"]]
            else:
                lo, hi = int(arg.get("low", -3) * 8), int(arg.get("high", 3) * 8)
                flat = [rng.randint(lo, hi) / 8 for _ in range(count)]
                # Avoid exact zeros unless asked for: log/division fixtures stay defined.
                flat = [v if v != 0 else 0.125 for v in flat]
            values.append(flat)
            tensors.append(torch.tensor(flat, dtype=torch.float64).reshape(arg["shape"]))
        elif "index" in arg:
            values.append(None)
            tensors.append(torch.tensor(arg["values"], dtype=torch.long).reshape(arg["index"]))
        elif "int" in arg:
            values.append(None)
            tensors.append(int(arg["int"]))
        elif "float" in arg:
            values.append(None)
            tensors.append(float(arg["float"]))
        else:
            raise ValueError(f"{case['name']}: unknown argument {arg}")
    return values, tensors


def reference_function(case):
    namespace = {"__name__": "reference_fixture"}
    exec(compile(case["source"], case["name"], "exec"), namespace)
    entry = case.get("entry")
    if entry:
        if "." in entry:
            cls, method = entry.split(".")
            return getattr(namespace[cls](), method)
        return namespace[entry]
    if "reference" in namespace:
        return namespace["reference"]
    modules = [v for v in namespace.values() if inspect.isclass(v) and issubclass(v, torch.nn.Module) and v is not torch.nn.Module]
    modules = [m for m in modules if m.__module__ == "reference_fixture" or m.__module__ == namespace["__name__"]]
    if len(modules) != 1:
        raise ValueError(f"{case['name']}: expected one nn.Module, found {modules}")
    init_inputs = namespace.get("get_init_inputs", lambda: [])()  # KernelBench's convention
    return modules[0](*init_inputs).forward


def flatten_output(value):
    if isinstance(value, (tuple, list)):
        return [flatten_output(v)[0] for v in value]
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"expected a tensor, found {type(value)}")
    is_int = not (value.dtype.is_floating_point)
    flat = value.detach().reshape(-1).tolist()
    return [{"shape": list(value.shape), "integer": is_int, "values": [int(v) if is_int else float(v) for v in flat]}]


def transcendental_references():
    """Ideal values (60 significant digits, mpmath) of functions at exact rational points, for
    checking the evaluator's error bounds."""
    import fractions

    import mpmath

    mpmath.mp.dps = 80
    funcs = {
        "exp": mpmath.exp, "log": mpmath.log, "sqrt": mpmath.sqrt, "rsqrt": lambda x: 1 / mpmath.sqrt(x),
        "tanh": mpmath.tanh, "erf": mpmath.erf, "sin": mpmath.sin, "cos": mpmath.cos,
        # Compositions, built the same way on the Rust side.
        "sigmoid": lambda x: 1 / (1 + mpmath.exp(-x)),
        "gelu_tanh": lambda x: x / 2 * (1 + mpmath.tanh(mpmath.sqrt(2 / mpmath.pi) * (x + mpmath.mpf(44715) / 10**6 * x**3))),
        "expm1_over_x": lambda x: (mpmath.exp(x) - 1) / x,
        "log_exp": lambda x: mpmath.log(mpmath.exp(x) + mpmath.exp(2 * x)),
    }
    points = ["1/3", "-5/2", "3/7", "10", "2", "1/1000", "7/10", "-3", "1/2", "-5/4", "3", "1", "25"]
    out = []
    for name, f in funcs.items():
        for p in points:
            x = fractions.Fraction(p)
            if name in ("log", "sqrt", "rsqrt") and x <= 0:
                continue
            value = f(mpmath.mpf(x.numerator) / x.denominator)
            out.append({"function": name, "x": p, "value": mpmath.nstr(value, 60, min_fixed=-100, max_fixed=100)})
    for name, value in (("pi", mpmath.pi), ("e", mpmath.e)):
        out.append({"function": name, "x": "0", "value": mpmath.nstr(value, 60, min_fixed=-100, max_fixed=100)})
    return out


def main():
    cases = tomllib.loads((FIXTURES / "cases.toml").read_text())["case"]
    expected = {}
    for case in cases:
        values, tensors = make_inputs(case)
        fn = reference_function(case)
        with torch.no_grad():
            result = fn(*tensors)
        outputs = flatten_output(result) if isinstance(result, torch.Tensor) else flatten_output(list(result))
        expected[case["name"]] = {"inputs": values, "outputs": outputs}
    text = json.dumps({"generated_by": "tests/gen_expected.py", "torch": torch.__version__, "cases": expected, "transcendental": transcendental_references()}, indent=1)
    (FIXTURES / "expected.json").write_text(text + "\n")
    print(f"wrote {len(expected)} cases to {FIXTURES / 'expected.json'}")


if __name__ == "__main__":
    main()
