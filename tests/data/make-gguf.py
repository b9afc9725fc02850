#!/usr/bin/env python3
"""Writes the small GGUF files under tests/data/ that the golden tests read (run from this directory).

lora-tiny.gguf: a LoRA adapter (GGUF v3, F16) on attn_q (64 -> 64) and attn_v (64 -> 16) in 2 layers, rank 4.
not-adapter.gguf: the same header with general.type = "model".
version1.gguf: a GGUF version 1 header.
tiny-llama.gguf: a 2-layer llama model (hidden 32, 4 heads / 2 KV heads, ffn 64, vocab 64), Q8_0 matrices and
F32 norms, file type 7 (Q8_0), with zeroed tensor data.
tiny-llama-truncated.gguf: its first 300 bytes (the file ends inside the tensor infos).
tiny-llama-mixed.gguf: tiny-llama in Q4_0 (file type 2) but for blk.0.ffn_down in Q8_0, as llama-quantize's
--tensor-type would leave it: a file whose matrices depart from llama.cpp's rules for its file type.
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


def kv_u32(key, value):
    return string(key) + struct.pack("<II", 4, value)


BLOCK_BYTES = {2: 18, 8: 34}  # bytes per 32 weights: Q4_0, Q8_0


def tiny_llama(file_type=7, q=8, overrides=None):
    hidden, ffn, vocab, layers = 32, 64, 64, 2
    tensors = [("token_embd.weight", (hidden, vocab), q)]
    for i in range(layers):
        tensors += [(f"blk.{i}.attn_norm.weight", (hidden,), 0), (f"blk.{i}.attn_q.weight", (hidden, 32), q),
                    (f"blk.{i}.attn_k.weight", (hidden, 16), q), (f"blk.{i}.attn_v.weight", (hidden, 16), q),
                    (f"blk.{i}.attn_output.weight", (32, hidden), q), (f"blk.{i}.ffn_norm.weight", (hidden,), 0),
                    (f"blk.{i}.ffn_gate.weight", (hidden, ffn), q), (f"blk.{i}.ffn_up.weight", (hidden, ffn), q),
                    (f"blk.{i}.ffn_down.weight", (ffn, hidden), q)]
    tensors += [("output_norm.weight", (hidden,), 0), ("output.weight", (hidden, vocab), 8)]
    tensors = [(name, dims, (overrides or {}).get(name, t)) for name, dims, t in tensors]
    kvs = [kv_string("general.architecture", "llama"), kv_u32("general.file_type", file_type),
           kv_u32("llama.block_count", layers), kv_u32("llama.embedding_length", hidden),
           kv_u32("llama.feed_forward_length", ffn), kv_u32("llama.attention.head_count", 4),
           kv_u32("llama.attention.head_count_kv", 2), kv_u32("llama.context_length", 2048)]
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs)
    offset, data = 0, b""
    for name, dims, ggml_type in tensors:
        rows = dims[1] if len(dims) > 1 else 1
        size = rows * (dims[0] // 32 * BLOCK_BYTES[ggml_type] if ggml_type in BLOCK_BYTES else dims[0] * 4)
        out += string(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", ggml_type, offset)
        padded = (size + 31) // 32 * 32
        offset += padded
        data += bytes(padded)
    out += bytes((len(out) + 31) // 32 * 32 - len(out))
    return out + data


open("tiny-llama.gguf", "wb").write(tiny_llama())
open("tiny-llama-truncated.gguf", "wb").write(tiny_llama()[:300])
open("tiny-llama-mixed.gguf", "wb").write(tiny_llama(2, 2, {"blk.0.ffn_down.weight": 8}))
open("lora-tiny.gguf", "wb").write(adapter("adapter"))
open("not-adapter.gguf", "wb").write(adapter("model"))
open("version1.gguf", "wb").write(b"GGUF" + struct.pack("<IQQ", 1, 0, 0))
