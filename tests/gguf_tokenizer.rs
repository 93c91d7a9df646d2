//! The tokenizer rein builds from a GGUF file's own vocabulary gives the token ids
//! llama.cpp gives, on a corpus of code, prose, unicode, whitespace and template
//! markers, for the tiny (SmolLM2, `smollm` splits) and small (Qwen2.5, `qwen2`
//! splits) models; and `rein run --backend openai --tokenizer MODEL.gguf` counts a
//! reply the server reports no usage for with it.

use crate::support::scripted_server::{says, scripted_server};
use crate::support::{model_engine, model_path, tiny_engine};

/// Lines of every kind a prompt holds.
const CORPUS: &[&str] = &[
    "fn main() {\n    let total: u64 = items.iter().map(|x| x.price * 3).sum();\n}",
    "def parse(path):\n\treturn [line.rstrip('\\n') for line in open(path)]  # TODO: errors",
    "{\"name\": \"read_file\", \"arguments\": {\"path\": \"src/lib.rs\", \"limit\": 200}}",
    "const url = `https://example.org/v1/items?id=${id}&sort=desc`;",
    "SELECT id, SUM(amount) FROM orders WHERE status <> 'void' GROUP BY id;",
    "The quick brown fox doesn't jump; it'LL wait. They've said I'M here, we'd go.",
    "Die Prüfung läuft über drei Stunden, und das Ergebnis ist öffentlich.",
    "Le café coûte 3,50 € — très cher ! ¿Qué pasa? Ça va.",
    "日本語のテキストと中文文本，还有한국어 문장도 있습니다。",
    "Emoji: 🥛🚀👩‍💻 and flags 🇩🇪🇯🇵; math: ∑ x² ≤ ∞; arrows → ⇒ ←.",
    "Ελληνικά κείμενα και русский текст и עברית וערבית: مرحبا بالعالم",
    "numbers 1234567890 3.14159 -42 1e-9 0x1F 2026-12-07T11:42:03Z",
    "    indented\n\n\n\t\ttabs   and   runs     of spaces   \n  trailing   ",
    "<|im_start|>system\nYou are careful.<|im_end|>\n<|im_start|>user\nhi<|im_end|>",
    "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"pattern\": \"TODO\"}}\n</tool_call>",
    "text<|endoftext|>more text <|im_end|>after",
    "a\r\nwindows\r\nlines\r\n",
    "",
    " ",
    "x",
];

fn llama_ids(name: &str) -> Vec<Vec<u32>> {
    let (runtime, engine) = model_engine(name, 512);
    CORPUS
        .iter()
        .map(|line| {
            runtime
                .block_on(engine.tokenize(line, false))
                .unwrap()
                .into_iter()
                .map(|id| u32::try_from(id).unwrap())
                .collect()
        })
        .collect()
}

fn check_model(name: &str) {
    let _model = rein_test_support::model_lock();
    let expected = llama_ids(name);
    let tokenizer = rein_remote::gguf_tokenizer::from_gguf(&model_path(name)).unwrap();
    for (line, want) in CORPUS.iter().zip(&expected) {
        let got = tokenizer.encode(*line, false).unwrap().get_ids().to_vec();
        assert_eq!(
            &got, want,
            "{name}: the ids of {line:?} differ from llama.cpp's"
        );
    }
}

#[test]
fn the_gguf_tokenizer_of_the_tiny_model_matches_llama_cpp() {
    check_model("tiny");
}

#[test]
fn the_gguf_tokenizer_of_the_small_model_matches_llama_cpp() {
    check_model("small");
}

#[test]
fn a_remote_reply_without_usage_is_counted_by_the_gguf_tokenizer() {
    const ANSWER: &str = "The notes say: remember the milk — and the café's 3 crème brûlées 🥛.";
    let tiny = model_path("tiny");
    let expected = {
        let _model = rein_test_support::model_lock();
        let (runtime, engine) = tiny_engine(512);
        runtime
            .block_on(engine.tokenize(ANSWER, false))
            .unwrap()
            .len()
    };
    let (url, _) = scripted_server(vec![says(ANSWER)]);
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rein"))
        .args([
            "run",
            "--backend",
            "openai",
            "--base-url",
            &url,
            "--model",
            "m",
            "--tokenizer",
            tiny.to_str().unwrap(),
            "--profile",
            "naive",
            "--workdir",
            dir.path().to_str().unwrap(),
            "--json",
            "What do the notes say?",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: serde_json::Value =
        serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap();
    assert_eq!(result["answer"], ANSWER, "{result}");
    assert_eq!(result["completion_tokens"], expected, "{result}");
    // Without the tokenizer the count is the four-characters-a-token estimate.
    assert_ne!(expected, ANSWER.len().div_ceil(4));
}
