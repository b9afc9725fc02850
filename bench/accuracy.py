#!/usr/bin/env python3
"""In-sample and out-of-sample error of edgeplan's fitted figures (docs/accuracy.md).

Runs the built edgeplan on the shipped profiles and prints:
  0. the in-sample decode fits: each fitted device's utilization and per-token overhead from its own figures,
     as its profile states them (rounded), with the largest in-sample error;
  1. prefill from [units]: the gpu utilization fitted to llama.cpp Metal pp512 on the Apple M1/M2 chips
     (the constant in src/core/plan.cpp), its in-sample error and its leave-one-chip-out error;
  2. leave-one-chip-out over the Apple table: decode (utilization and per-token overhead) and prefill
     ([prefill] efficiencies) fitted on the other chips, predicting the chip left out;
  3. leave-one-format-out on the phone (Snapdragon 8 Gen 3, ExecuTorch CPU): decode and prefill fitted on
     one weight format, predicting the other.
The M3, M4 and M2 Ultra rows of llama.cpp's Apple Silicon discussion are not used anywhere here.
Usage: bench/accuracy.py [path/to/edgeplan]   (default build/dev/edgeplan)
"""
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/dev/edgeplan")

# llama-bench, Metal, build 8e672ef, Llama-2-7B: (chip, format, tg128, pp512) tok/s,
# https://github.com/ggml-org/llama.cpp/discussions/4167 (M1 and M2 rows only).
APPLE = [
    ("apple-m1-8g", "Q8_0", 7.91, 117.25), ("apple-m1-8g", "Q4_0", 14.15, 117.96),
    ("apple-m1-pro-32g", "F16", 12.75, 302.14), ("apple-m1-pro-32g", "Q8_0", 22.34, 270.37),
    ("apple-m1-pro-32g", "Q4_0", 36.41, 266.25),
    ("apple-m1-max-64g", "F16", 23.03, 599.53), ("apple-m1-max-64g", "Q8_0", 40.20, 537.37),
    ("apple-m1-max-64g", "Q4_0", 61.19, 530.06),
    ("apple-m2-24g", "F16", 6.72, 201.34), ("apple-m2-24g", "Q8_0", 12.21, 181.40),
    ("apple-m2-24g", "Q4_0", 21.91, 179.57),
    ("apple-m2-pro-32g", "F16", 13.06, 384.38), ("apple-m2-pro-32g", "Q8_0", 23.01, 344.50),
    ("apple-m2-pro-32g", "Q4_0", 38.86, 341.19),
    ("apple-m2-max-64g", "F16", 24.65, 755.67), ("apple-m2-max-64g", "Q8_0", 41.83, 677.91),
    ("apple-m2-max-64g", "Q4_0", 65.95, 671.31),
]

# ExecuTorch on the CPU of a OnePlus 12 (Snapdragon 8 Gen 3, as galaxy-s24-ultra), prompt 64, and a Galaxy S24
# (decode only): (model, format, decode tok/s, prefill tok/s or None). 4-bit SpinQuant / groupwise costed as Q4_0.
# https://github.com/pytorch/executorch/blob/main/examples/models/llama/README.md ("Performance")
PHONE = [
    ("llama-3.2-1b", "BF16", 19.2, 60.3), ("llama-3.2-1b", "Q4_0", 50.2, 260.5),
    ("llama-3.2-3b", "BF16", 7.6, 21.2), ("llama-3.2-3b", "Q4_0", 19.7, 89.7),
    ("llama-3.1-8b", "Q4_0", 10.91, None),
]
PHONE_DEVICE, PHONE_PROMPT = "galaxy-s24-ultra", 64

# Decode figures the other fitted profiles are fitted to (docs/accuracy.md, "Phones, Jetson and Raspberry Pi"):
# MLC INT4 on a Jetson Orin Nano at 68 GB/s (Q4_0 as the size), Ollama CPU on a Raspberry Pi 5 (Q4_K_M).
OTHER = {
    "jetson-orin-nano-8g": [("llama-3.1-8b", "Q4_0", 14.0, None)],
    "raspberry-pi-5-8g": [("llama-3.2-3b", "Q4_K_M", 4.61, None), ("llama-3.1-8b", "Q4_K_M", 1.99, None)],
}


def run(*args):
    out = subprocess.run([BIN, *args, "--format", "json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def decode_json(device, model, fmt, prompt=512, profiles=None):
    extra = ["--profiles", profiles] if profiles else []
    return run("decode", *extra, "--device", device, "--model", model, "--quant", fmt, "--context", "0",
               "--prompt", str(prompt))


def err(pred, meas):
    return pred / meas - 1


def summary(errors):
    a = [abs(e) for e in errors]
    return f"median |error| {100 * statistics.median(a):.1f}%, largest {100 * max(a):.1f}% over {len(a)} figures"


def without_prefill(device, tmp):
    """Copy of a shipped device profile without its [prefill] section (the lines up to the next blank line)."""
    text = open(os.path.join(ROOT, "profiles/devices", device + ".toml")).read()
    text = re.sub(r"^\[prefill\][^\n]*\n(?:[^\n]+\n)*", "", text, flags=re.M)
    os.makedirs(os.path.join(tmp, "devices"), exist_ok=True)
    open(os.path.join(tmp, "devices", device + ".toml"), "w").write(text)


def geo_mean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def units_prefill():
    print("1. prefill from [units]: gpu roofline x utilization, llama.cpp Metal pp512 (Llama-2-7B)")
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for chip, fmt, _, pp in APPLE:
            without_prefill(chip, tmp)
            j = decode_json(chip, "llama-2-7b", fmt, profiles=tmp)
            basis = j["results"]["prefill_basis"]
            assert basis["source"] == "units" and basis["unit"] == "gpu", basis
            roofline_s = basis["utilization"] * 512 / j["results"]["formats"][0]["prefill_tok_per_s"]
            rows.append((chip, fmt, roofline_s, 512 / pp))
    u = geo_mean([r / m for _, _, r, m in rows])
    print(f"   fitted utilization {u:.3f} (geometric mean of roofline / measured time over {len(rows)} runs)")
    print(f"   {'chip':18} {'format':6} {'measured':>9} {'in-sample':>10} {'error':>7} {'out-of-sample':>14} {'error':>7}")
    ins, outs = [], []
    for chip, fmt, r, m in rows:
        u_out = geo_mean([r2 / m2 for c2, _, r2, m2 in rows if c2 != chip])
        p_in, p_out, meas = 512 * u / r, 512 * u_out / r, 512 / m
        ins.append(err(p_in, meas))
        outs.append(err(p_out, meas))
        print(f"   {chip:18} {fmt:6} {meas:9.2f} {p_in:10.2f} {100 * ins[-1]:+6.1f}% {p_out:14.2f} {100 * outs[-1]:+6.1f}%")
    print(f"   in-sample: {summary(ins)}")
    print(f"   leave-one-chip-out: {summary(outs)}")
    print()


def wls_decode(points):
    """Least squares of t = a x + c on the relative error (weights 1 / t^2): x = bytes / bandwidth, t = 1 / tg.
    Returns (a, c): utilization 1 / a, overhead c. One point, or a negative intercept (time growing faster than the
    bytes, as calibrate): through the origin, c = 0."""
    if len(points) == 1:
        x, t = points[0]
        return t / x, 0.0
    w = [1 / t ** 2 for _, t in points]
    sw = sum(w)
    sx = sum(wi * x for wi, (x, _) in zip(w, points))
    st = sum(wi * t for wi, (_, t) in zip(w, points))
    sxx = sum(wi * x * x for wi, (x, _) in zip(w, points))
    sxt = sum(wi * x * t for wi, (x, t) in zip(w, points))
    a = (sw * sxt - sx * st) / (sw * sxx - sx * sx)
    c = (st - a * sx) / sw
    if c < 0:
        return sxt / sxx, 0.0
    return a, c


def decode_rows(device, rows, prompt):
    """For each (model, format, tg, pp): x = the weight bytes a token reads / bandwidth, and the prompt's time at
    efficiency 1 (prefill seconds x the [prefill] efficiency edgeplan used; None without [prefill]), from
    edgeplan's own figures."""
    out = []
    for model, fmt, tg, pp in rows:
        j = decode_json(device, model, fmt, prompt=prompt)
        dev = j["inputs"]["device"]
        f = j["results"]["formats"][0]
        x = f["active_bytes"] / (dev["bandwidth_gbps"] * 1e9)
        pre = dev.get("prefill")
        quantized = fmt not in ("F16", "BF16", "F32")
        base_s = None
        if pre:
            eff = pre.get("quantized_efficiency", pre["efficiency"]) if quantized else pre["efficiency"]
            base_s = prompt / f["prefill_tok_per_s"] * eff
        out.append((model, fmt, x, 1 / tg, base_s, prompt / pp if pp else None, quantized))
    return out


def in_sample_fits():
    print("0. in-sample decode fits: utilization and overhead (ms) from each device's own figures, rounded as")
    print("   its profile states them; error = that rounded line's tok/s / measured - 1")
    fitted = {}
    for chip, fmt, tg, pp in APPLE:
        fitted.setdefault(chip, []).append(("llama-2-7b", fmt, tg, pp))
    fitted["macbook-air-m1-16g"] = fitted["apple-m1-8g"]
    fitted[PHONE_DEVICE] = PHONE
    fitted.update(OTHER)
    print(f"   {'device':20} {'figures':>7} {'utilization':>11} {'overhead':>9} {'largest error':>14}")
    for device, rows in fitted.items():
        data = decode_rows(device, rows, 512)
        a, c = wls_decode([(x, t) for _, _, x, t, _, _, _ in data])
        u, o = round(1 / a, 3), round(1e3 * c, 2)
        worst = max(abs(err(1 / (x / u + o / 1e3), 1 / t)) for _, _, x, t, _, _, _ in data)
        print(f"   {device:20} {len(data):7} {u:11.3f} {o:9.2f} {100 * worst:13.1f}%")
    print()


def apple_loo():
    print("2. leave-one-chip-out over the Apple table (llama.cpp Metal, Llama-2-7B; M1/M2 rows only)")
    print("   each chip predicted from a pooled fit on the other five: decode utilization and overhead, prefill")
    print("   efficiency (F16 and quantized apart) x the chip's own datasheet bandwidth and GPU peak")
    rows = {}
    for chip, fmt, tg, pp in APPLE:
        rows.setdefault(chip, []).append(("llama-2-7b", fmt, tg, pp))
    data = {chip: decode_rows(chip, r, 512) for chip, r in rows.items()}
    dec, pre = [], []
    print(f"   {'chip':18} {'format':6} {'tg error':>9} {'pp512 error':>12}")
    for chip in data:
        others = [r for c, rs in data.items() if c != chip for r in rs]
        a, c = wls_decode([(x, t) for _, _, x, t, _, _, _ in others])
        eff = {q: geo_mean([b / m for *_, b, m, qq in others if qq == q]) for q in (False, True)}
        for _, fmt, x, t, b, m, q in data[chip]:
            dec.append(err(t, a * x + c))          # tok/s predicted / measured - 1
            pre.append(err(m, b / eff[q]))
            print(f"   {chip:18} {fmt:6} {100 * dec[-1]:+8.1f}% {100 * pre[-1]:+11.1f}%")
    print(f"   decode: {summary(dec)}")
    print(f"   prefill: {summary(pre)}")
    print()
    return dec, pre


def phone_lofo():
    print("3. leave-one-format-out on the phone (Snapdragon 8 Gen 3, ExecuTorch CPU; galaxy-s24-ultra)")
    print("   decode utilization and overhead, and the prefill rate, fitted on one format, predicting the other")
    data = decode_rows(PHONE_DEVICE, PHONE, PHONE_PROMPT)
    dec, pre = [], []
    print(f"   {'model':14} {'format':6} {'decode error':>13} {'prefill error':>14}")
    for left in ("BF16", "Q4_0"):
        fit = [r for r in data if r[1] != left]
        a, c = wls_decode([(x, t) for _, _, x, t, _, _, _ in fit])
        rate = geo_mean([b / m for *_, b, m, _ in fit if m])
        for model, fmt, x, t, b, m, _ in data:
            if fmt != left:
                continue
            dec.append(err(t, a * x + c))
            pp = f"{100 * err(m, b / rate):+13.1f}%" if m else f"{'--':>14}"
            if m:
                pre.append(err(m, b / rate))
            print(f"   {model:14} {fmt:6} {100 * dec[-1]:+12.1f}% {pp}")
    print(f"   decode: {summary(dec)}")
    print(f"   prefill: {summary(pre)}")
    print()
    return dec, pre


if __name__ == "__main__":
    if not os.access(BIN, os.X_OK):
        sys.exit(f"accuracy.py: no binary at {BIN} (build it first)")
    in_sample_fits()
    units_prefill()
    apple_loo()
    phone_lofo()
