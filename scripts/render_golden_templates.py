"""Writes the golden chat-template renderings that rein's template tests compare against.

Run once, from the repository root, with the reference renderer (Python Jinja2, set up
as Hugging Face's `apply_chat_template` sets it up):

    python3 scripts/render_golden_templates.py --model smollm2=PATH/TO/tiny.gguf \
        --model qwen2.5=PATH/TO/small.gguf

For each model it stores the template (`<name>.jinja`) and its BOS/EOS token texts
(`<name>.json`) beside `tests/golden/templates/cases.json`, then renders every case
that names the template into `<name>__<case>.txt`.
"""
import argparse
import datetime
import json
import os
import sys

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_meta  # noqa: E402

GOLDEN = os.path.join("tests", "golden", "templates")


def environment():
    """The Jinja2 environment of transformers' `_compile_jinja_template`."""

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return datetime.datetime.now().strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def token_text(meta, key):
    token_id = meta.get(key)
    return "" if token_id is None else meta["tokenizer.ggml.tokens"][token_id]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", action="append", required=True, help="NAME=PATH of a GGUF file")
    args = parser.parse_args()
    with open(os.path.join(GOLDEN, "cases.json"), encoding="utf-8") as f:
        spec = json.load(f)
    env = environment()
    for item in args.model:
        name, path = item.split("=", 1)
        meta = gguf_meta.read_metadata(path)
        source = meta["tokenizer.chat_template"]
        tokens = {
            "bos_token": token_text(meta, "tokenizer.ggml.bos_token_id"),
            "eos_token": token_text(meta, "tokenizer.ggml.eos_token_id"),
        }
        with open(os.path.join(GOLDEN, f"{name}.jinja"), "w", encoding="utf-8", newline="") as f:
            f.write(source)
        with open(os.path.join(GOLDEN, f"{name}.json"), "w", encoding="utf-8") as f:
            json.dump(tokens, f, ensure_ascii=False, indent=2)
            f.write("\n")
        template = env.from_string(source)
        for case in spec["cases"]:
            if name not in case["templates"]:
                continue
            text = template.render(
                messages=case["messages"],
                tools=spec["tools"] if case["with_tools"] else None,
                documents=None,
                add_generation_prompt=case["add_generation_prompt"],
                **tokens,
            )
            out = os.path.join(GOLDEN, f"{name}__{case['name']}.txt")
            with open(out, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            print(f"wrote {out} ({len(text)} chars)")


if __name__ == "__main__":
    main()
