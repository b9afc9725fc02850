#!/usr/bin/env python3
"""Writes the small GGUF files under tests/data/ that the golden tests read (run from this directory).

lora-tiny.gguf: a LoRA adapter (GGUF v3, F16) on attn_q (64 -> 64) and attn_v (64 -> 16) in 2 layers, rank 4.
not-adapter.gguf: the same header with general.type = "model".
version1.gguf: a GGUF version 1 header.
"""
import struct


def string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def kv_string(key, value):
    return string(key) + struct.pack("<I", 8) + string(value)


def kv_f32(key, value):
    return string(key) + struct.pack("<If", 6, value)


def adapter(general_type):
    tensors = []
    for layer in range(2):
        for name, d_out in (("attn_q", 64), ("attn_v", 16)):
            base = f"blk.{layer}.{name}.weight"
            tensors.append((base + ".lora_a", (64, 4)))
            tensors.append((base + ".lora_b", (4, d_out)))
    kvs = [kv_string("general.architecture", "llama"), kv_string("general.type", general_type),
           kv_string("adapter.type", "lora"), kv_f32("adapter.lora.alpha", 32.0)]
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs)
    offset, data = 0, b""
    for name, dims in tensors:
        size = dims[0] * dims[1] * 2
        out += string(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", 1, offset)
        offset += (size + 31) // 32 * 32
        data += bytes(size) + bytes((size + 31) // 32 * 32 - size)
    out += bytes((len(out) + 31) // 32 * 32 - len(out))
    return out + data


open("lora-tiny.gguf", "wb").write(adapter("adapter"))
open("not-adapter.gguf", "wb").write(adapter("model"))
open("version1.gguf", "wb").write(b"GGUF" + struct.pack("<IQQ", 1, 0, 0))
