#!/usr/bin/env python3
"""Compare `edgeplan quant` with the deployment walkthrough's NumPy quantizer on the same matrix.

Rebuilds edgeplan's seeded synthetic matrix in NumPy (SplitMix64 + Box-Muller, docs/model.md "quant"), runs
the walkthrough's quantize_fp32_to_int8 (asymmetric INT8, per channel and per tensor) on it, and prints its
mean absolute error, cosine of W.x and GB/s of FP32 input beside edgeplan's int8-asym-channel and
int8-asym-tensor. The walkthrough codes q = round((w - min) / s) but dequantizes with the rounded zero point,
(q - z) x s, which shifts every value by up to s/2: its MAE comes out about a third higher than edgeplan's
q = round(w / s) + z. Skips the NumPy side when NumPy is not installed.

    bench/quant_numpy.py [--binary build/dev/edgeplan] [--rows 4096] [--cols 4096] [--seed 42]
"""
import argparse
import json
import subprocess
import sys
import time

MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def splitmix64_outputs(np, seed, indices):
    """Output number k (0-based) of SplitMix64(seed) for each k in indices: mix(seed + (k + 1) x gamma)."""
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + (indices.astype(np.uint64) + np.uint64(1)) * np.uint64(GAMMA)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def uniform(np, seed, indices):
    return (splitmix64_outputs(np, seed, indices) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def synthetic(np, rows, cols, seed, std=0.02, fraction=0.1, lo=2.0, hi=3.0):
    """edgeplan's synthetic_matrix: per row an outlier draw, a factor draw, then cols Box-Muller normals."""
    per_row = 2 + 2 * cols
    base = np.arange(rows, dtype=np.uint64) * np.uint64(per_row)
    outlier = uniform(np, seed, base) < fraction
    factor = lo + (hi - lo) * uniform(np, seed, base + np.uint64(1))
    scale = std * np.where(outlier, factor, 1.0)
    k = base[:, None] + np.uint64(2) + np.uint64(2) * np.arange(cols, dtype=np.uint64)[None, :]
    u1 = 1.0 - uniform(np, seed, k)
    u2 = uniform(np, seed, k + np.uint64(1))
    normal = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
    return (scale[:, None] * normal).astype(np.float32)


def quantize_fp32_to_int8(np, weights, per_channel=True):
    """The walkthrough's implementation, as printed."""
    if per_channel:
        w_min = weights.min(axis=1, keepdims=True)
        w_max = weights.max(axis=1, keepdims=True)
    else:
        w_min = weights.min()
        w_max = weights.max()
    scales = (w_max - w_min) / 255.0
    scales = np.where(scales < 1e-10, 1.0, scales)
    zero_points = np.round(-w_min / scales)
    zero_points = np.clip(zero_points, 0, 255)
    w_int8 = np.round((weights - w_min) / scales)
    w_int8 = np.clip(w_int8, 0, 255).astype(np.uint8)
    return w_int8, scales, zero_points


def numpy_side(rows, cols, seed):
    try:
        import numpy as np
    except ImportError:
        print("numpy: not installed, NumPy side skipped (apt-get install python3-numpy)")
        return {}
    w = synthetic(np, rows, cols, seed)
    x = np.random.default_rng(seed + 1).standard_normal(cols).astype(np.float32)
    out = {}
    for name, per_channel in (("int8-asym-channel", True), ("int8-asym-tensor", False)):
        start = time.perf_counter()
        q, scales, zero_points = quantize_fp32_to_int8(np, w, per_channel)
        deq = ((q.astype(np.float32) - zero_points) * scales).astype(np.float32)
        mae = float(np.abs(deq - w).mean())
        y, y_hat = w @ x, deq @ x
        cosine = float(np.dot(y, y_hat) / (np.linalg.norm(y) * np.linalg.norm(y_hat)))
        seconds = time.perf_counter() - start
        out[name] = {"mean_abs_error": mae, "cosine": cosine, "fp32_gbps": w.nbytes / seconds / 1e9}
    return out


def edgeplan_side(binary, rows, cols, seed):
    args = [binary, "quant", "--rows", str(rows), "--cols", str(cols), "--seed", str(seed), "--inputs", "1",
            "--methods", "int8-asym-channel,int8-asym-tensor", "--timing", "--format", "json"]
    report = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    return {m["method"]: m for m in report["results"]["methods"]}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--binary", default="build/dev/edgeplan")
    p.add_argument("--rows", type=int, default=4096)
    p.add_argument("--cols", type=int, default=4096)
    p.add_argument("--seed", type=int, default=42)
    a = p.parse_args()
    ours = edgeplan_side(a.binary, a.rows, a.cols, a.seed)
    theirs = numpy_side(a.rows, a.cols, a.seed)
    print(f"{a.rows} x {a.cols} synthetic matrix, seed {a.seed}")
    print(f"{'method':18} {'side':9} {'MAE':>12} {'cos(Wx)':>10} {'GB/s FP32':>10}")
    for name, m in ours.items():
        for side, r in (("edgeplan", m), ("numpy", theirs.get(name))):
            if r:
                print(f"{name:18} {side:9} {r['mean_abs_error']:12.4e} {r['cosine']:10.6f} {r['fp32_gbps']:10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
