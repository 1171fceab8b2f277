"""Writes a tiny random-weight Llama model as a GGUF file, for tests against llama.cpp's server.

    tiny_model.py OUT.gguf [--vocabulary small|llama3|qwen] [--quicktok-data DIR]

The weights are random (two layers, 16-wide), so replies are gibberish, but everything the server
does around them is real: its chat template, tokenizer, context limit, streaming and stopping.

`small` is a byte-level vocabulary (the 256 bytes, a few merges and the ChatML control tokens).
`llama3` and `qwen` carry the real Llama 3 and Qwen vocabularies, read from the token-counting
library's own files (the folder `--quicktok-data` names), with the merges a BPE tokenizer needs
derived from the token ranks the way Meta's and Qwen's published tokenizers were, and the
pre-tokenizer named as llama.cpp names it (`llama-bpe`, `qwen2`). No file is downloaded.

Only tokens of printable ASCII (and line breaks) can be sampled: the first embedding dimension is
a large constant for every token, and the output rows of all others weigh it strongly negative. So
a reply runs until the request's limit or the context's end instead of stopping at a random
end-of-turn token, and it is whole characters: llama-cpp-python holds streamed text back while its
bytes are not yet valid UTF-8, which random bytes never become.
"""

import argparse
import struct
import sys
from pathlib import Path

import numpy as np
import gguf

EMBEDDING = 16
HEADS = 2
LAYERS = 2
FEED_FORWARD = 32
CONTEXT = 65536

CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{{ message['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def byte_to_unicode():
    """GPT-2's printable stand-ins for the 256 bytes, which byte-level BPE vocabularies use."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\u00a1"), ord("\u00ac") + 1))
    printable += list(range(ord("\u00ae"), ord("\u00ff") + 1))
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {b: chr(c) for b, c in zip(printable, chars)}


BYTE_CHARS = byte_to_unicode()


def sampleable(token: bytes) -> bool:
    return all(32 <= b < 127 or b == 10 for b in token)


def spelled(token: bytes) -> str:
    return "".join(BYTE_CHARS[b] for b in token)


def read_quicktok_vocab(path: Path):
    """The library's vocabulary file: a count, then (length, bytes, rank) records."""
    data = path.read_bytes()
    (count,) = struct.unpack_from("<I", data, 0)
    at = 4
    by_rank = [b""] * count
    for _ in range(count):
        (length,) = struct.unpack_from("<H", data, at)
        at += 2
        token = data[at : at + length]
        at += length
        (rank,) = struct.unpack_from("<I", data, at)
        at += 4
        by_rank[rank] = token
    return by_rank


def read_quicktok_specials(path: Path):
    data = path.read_bytes()
    (count,) = struct.unpack_from("<I", data, 0)
    at = 4
    specials = {}
    for _ in range(count):
        token_id, length = struct.unpack_from("<IH", data, at)
        at += 6
        specials[token_id] = data[at : at + length].decode("utf-8")
        at += length
    return specials


def merges_from_ranks(by_rank):
    """The merges of a rank-based BPE vocabulary: for each token, every split into two tokens,
    ordered by the merged token's rank, then the parts' ranks (as the published conversions of
    Llama 3's and Qwen's tiktoken-style vocabularies did)."""
    rank_of = {token: rank for rank, token in enumerate(by_rank)}
    merges = []
    for rank, token in enumerate(by_rank):
        if len(token) < 2:
            continue
        local = []
        for split in range(1, len(token)):
            left, right = token[:split], token[split:]
            if left in rank_of and right in rank_of:
                local.append((rank, rank_of[left], rank_of[right], left, right))
        merges.extend(sorted(local))
    merges.sort(key=lambda merge: merge[:3])
    return [f"{spelled(left)} {spelled(right)}" for _, _, _, left, right in merges]


def small_vocabulary():
    by_rank = [bytes([b]) for b in range(256)]
    merges = []
    for pair in [b"th", b"he", b"in", b"er", b"an", b" t", b" a", b"re", b"on", b"at"]:
        merges.append(f"{spelled(pair[:1])} {spelled(pair[1:])}")
        by_rank.append(pair)
    tokens = [spelled(token) for token in by_rank]
    types = [gguf.TokenType.NORMAL] * len(tokens)
    sampled = [sampleable(token) for token in by_rank]
    controls = ["<|im_start|>", "<|im_end|>", "<|endoftext|>"]
    for control in controls:
        tokens.append(control)
        types.append(gguf.TokenType.CONTROL)
        sampled.append(False)
    end = tokens.index("<|im_end|>")
    return tokens, types, sampled, merges, "default", tokens.index("<|endoftext|>"), end


def library_vocabulary(data: Path, name: str):
    by_rank = read_quicktok_vocab(data / f"{name}.vocab")
    specials = read_quicktok_specials(data / f"{name}.special")
    tokens = [spelled(token) for token in by_rank]
    types = [gguf.TokenType.NORMAL] * len(tokens)
    sampled = [sampleable(token) for token in by_rank]
    last = max(specials) if specials else len(tokens) - 1
    for token_id in range(len(tokens), last + 1):
        # Ids the model reserves without a published spelling stay unusable control tokens.
        tokens.append(specials.get(token_id, f"<|reserved_{token_id}|>"))
        types.append(gguf.TokenType.CONTROL)
        sampled.append(False)
    merges = merges_from_ranks(by_rank)
    if name == "llama3":
        ends = tokens.index("<|begin_of_text|>"), tokens.index("<|eot_id|>")
        return tokens, types, sampled, merges, "llama-bpe", *ends
    ends = tokens.index("<|endoftext|>"), tokens.index("<|im_end|>")
    return tokens, types, sampled, merges, "qwen2", *ends


def write(out: Path, vocabulary, seed: int):
    tokens, types, sampled, merges, pre, bos, eos = vocabulary
    rng = np.random.default_rng(seed)
    writer = gguf.GGUFWriter(str(out), "llama")
    writer.add_name("pinloom-tiny-test-model")
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(EMBEDDING)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FEED_FORWARD)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(HEADS)
    writer.add_rope_dimension_count(EMBEDDING // HEADS)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre(pre)
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(bos)
    writer.add_eos_token_id(eos)
    # Counts compare text with text: no token is added in front.
    writer.add_add_bos_token(False)
    writer.add_chat_template(CHATML)

    vocab = len(tokens)
    never = ~np.array(sampled)

    def weight(*shape, scale=0.02):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    embedding = weight(vocab, EMBEDDING, scale=1.0)
    embedding[:, 0] = 8.0
    writer.add_tensor("token_embd.weight", embedding)
    for layer in range(LAYERS):
        prefix = f"blk.{layer}"
        writer.add_tensor(f"{prefix}.attn_norm.weight", np.ones(EMBEDDING, dtype=np.float32))
        for part in ["attn_q", "attn_k", "attn_v", "attn_output"]:
            writer.add_tensor(f"{prefix}.{part}.weight", weight(EMBEDDING, EMBEDDING))
        writer.add_tensor(f"{prefix}.ffn_norm.weight", np.ones(EMBEDDING, dtype=np.float32))
        writer.add_tensor(f"{prefix}.ffn_gate.weight", weight(FEED_FORWARD, EMBEDDING))
        writer.add_tensor(f"{prefix}.ffn_up.weight", weight(FEED_FORWARD, EMBEDDING))
        writer.add_tensor(f"{prefix}.ffn_down.weight", weight(EMBEDDING, FEED_FORWARD))
    writer.add_tensor("output_norm.weight", np.ones(EMBEDDING, dtype=np.float32))
    output = weight(vocab, EMBEDDING, scale=1.0)
    output[:, 0] = np.where(never, -50.0, 0.0)
    writer.add_tensor("output.weight", output)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--vocabulary", choices=["small", "llama3", "qwen"], default="small")
    parser.add_argument("--quicktok-data", type=Path)
    parser.add_argument("--seed", type=int, default=7)
    arguments = parser.parse_args()
    if arguments.vocabulary == "small":
        vocabulary = small_vocabulary()
    else:
        if arguments.quicktok_data is None:
            sys.exit("--quicktok-data is needed for the llama3 and qwen vocabularies")
        name = "llama3" if arguments.vocabulary == "llama3" else "qwen3"
        vocabulary = library_vocabulary(arguments.quicktok_data, name)
    write(arguments.out, vocabulary, arguments.seed)


if __name__ == "__main__":
    main()
