//! Speculative decoding by prompt lookup, and by a draft model, on the real tiny model:
//! drafted tokens the sampler picks are kept (fewer `decode`s), the grammar still
//! decides every token, and a session's KV cache holds exactly the kept tokens for its
//! next turn. A draft model with another tokenizer is refused.
//!
//! Greedy output equals plain decoding's wherever batched and single-token kernels
//! round alike: the verification batch runs other matrix kernels than a one-token
//! decode (docs/decisions/0031), so equality is asserted on replies whose every token
//! is a confident copy, and exactly on replies a grammar pins down.

use rein_llama::{
    Engine, EngineConfig, GenerateOutput, GenerateRequest, Grammar, LocalModel, Prompt,
    SamplingParams,
};
use rein_protocol::Message;

use crate::support::{model_path, tiny_model};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn config(draft_tokens: u32) -> EngineConfig {
    let mut config = EngineConfig::new(tiny_model());
    config.n_ctx = Some(4096);
    config.threads = Some(2);
    config.max_sessions = 2;
    config.draft_tokens = draft_tokens;
    config
}

async fn load(draft_tokens: u32) -> LocalModel {
    LocalModel::new(Engine::load(config(draft_tokens)).await.unwrap()).unwrap()
}

/// The tiny model drafting for itself: the same tokenizer, so it is accepted, and its
/// greedy drafts are the target's own picks up to the rounding of batched kernels.
async fn load_with_draft_model(draft_tokens: u32) -> LocalModel {
    let mut config = config(draft_tokens);
    config.draft_model = Some(tiny_model());
    LocalModel::new(Engine::load(config).await.unwrap()).unwrap()
}

const LINES: &str = "src/parser.py:12: # TODO: handle quoted fields that span lines\nsrc/parser.py:48: # TODO: report the column of a bad delimiter\nsrc/cli.py:7: # TODO: read the delimiter from --sep\ntests/test_parser.py:30: # TODO: cover empty input";

/// A user turn asking to copy `LINES`, rendered by the model's template.
fn copy_prompt(model: &LocalModel, extra: &str) -> String {
    let task = format!("Copy these lines exactly, in the same order:\n{LINES}{extra}");
    model
        .format()
        .prepare(&rein_format::TurnSpec::plain(&[Message::user(task)]))
        .unwrap()
        .prompt
}

fn greedy(prompt: String, max_tokens: u32) -> GenerateRequest {
    let mut request = GenerateRequest::new(Prompt::Text(prompt));
    request.sampling = SamplingParams::greedy();
    request.max_tokens = max_tokens;
    request
}

/// A grammar that allows only `text`.
fn only(text: &str) -> Grammar {
    Grammar {
        gbnf: format!("root ::= {}", serde_json::to_string(text).unwrap()),
        root: "root".into(),
        lazy_triggers: Vec::new(),
    }
}

async fn generate(model: &LocalModel, request: GenerateRequest) -> GenerateOutput {
    let mut session = model.engine().session().await.unwrap();
    session.generate(request).await.unwrap()
}

#[test]
fn drafts_are_kept_where_the_sampler_picks_them_and_the_grammar_decides_every_token() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    runtime().block_on(async {
        let plain = load(0).await;
        let drafting = load(8).await;

        // A confident copy: the same text, in fewer decodes.
        let expected = generate(&plain, greedy(copy_prompt(&plain, ""), 64)).await;
        let got = generate(&drafting, greedy(copy_prompt(&drafting, ""), 64)).await;
        assert_eq!(got.text, expected.text);
        assert_eq!(got.tokens, expected.tokens);
        assert_eq!((expected.drafted_tokens, expected.accepted_tokens), (0, 0));
        assert!(got.accepted_tokens > 0, "{got:?}");
        assert!(got.accepted_tokens <= got.drafted_tokens);

        // Under a grammar that allows one line of the prompt, the lookup drafts the
        // rest of that line and then the next one, which the grammar refuses: the
        // reply is the line, exactly.
        let line = "src/cli.py:7: # TODO: read the delimiter from --sep";
        let mut pinned = greedy(copy_prompt(&drafting, "\nNow only the cli.py line:"), 64);
        pinned.grammar = Some(only(line));
        let out = generate(&drafting, pinned.clone()).await;
        assert_eq!(out.text, line);
        assert!(out.accepted_tokens > 0, "{out:?}");
        assert!(out.drafted_tokens > out.accepted_tokens, "{out:?}");
        let plain_out = generate(&plain, pinned).await;
        assert_eq!(plain_out.text, out.text);
        assert_eq!(plain_out.tokens, out.tokens);
    });
}

#[test]
fn a_session_goes_on_from_exactly_the_kept_tokens_beside_another_session() {
    let _model = rein_test_support::model_lock();
    runtime().block_on(async {
        let plain = load(0).await;
        let drafting = load(8).await;
        let mut outputs = Vec::new();
        for model in [&plain, &drafting] {
            // Two turns in one session (the second reuses the first's KV cache), while
            // a second session generates at the same time.
            let mut first = model.engine().session().await.unwrap();
            let mut other = model.engine().session().await.unwrap();
            let prompt = copy_prompt(model, "");
            let (one, beside) = tokio::join!(
                first.generate(greedy(prompt.clone(), 48)),
                other.generate(greedy(copy_prompt(model, "\nThen say done."), 48))
            );
            let one = one.unwrap();
            let next = format!("{prompt}{}\nAnd the last line once more:\n", one.text);
            let two = first.generate(greedy(next, 24)).await.unwrap();
            outputs.push((one, beside.unwrap(), two));
        }
        let (plain_run, drafting_run) = (&outputs[0], &outputs[1]);
        assert_eq!(plain_run.0.text, drafting_run.0.text);
        assert_eq!(plain_run.1.text, drafting_run.1.text);
        assert_eq!(plain_run.2.text, drafting_run.2.text);
        // The second turn found the first one's tokens in the cache, as many as with
        // plain decoding: nothing drafted and dropped was left there as the sequence's.
        assert_eq!(plain_run.2.reused_tokens, drafting_run.2.reused_tokens);
        assert!(drafting_run.2.reused_tokens >= drafting_run.0.prompt_tokens);
        assert!(drafting_run.0.accepted_tokens + drafting_run.1.accepted_tokens > 0);
    });
}

#[test]
fn a_draft_model_drafts_what_plain_decoding_picks_across_turns_and_under_a_grammar() {
    let _model = rein_test_support::model_lock();
    runtime().block_on(async {
        let plain = load(0).await;
        let drafting = load_with_draft_model(3).await;
        let mut session = drafting.engine().session().await.unwrap();
        let mut plain_session = plain.engine().session().await.unwrap();
        let prompt = copy_prompt(&drafting, "");
        let expected = plain_session
            .generate(greedy(prompt.clone(), 48))
            .await
            .unwrap();
        let got = session.generate(greedy(prompt.clone(), 48)).await.unwrap();
        assert_eq!(got.text, expected.text);
        assert!(got.drafted_tokens > 0, "{got:?}");
        assert!(got.accepted_tokens > 0, "{got:?}");
        // The next turn of the same session: the draft model's sequence is brought up
        // to the new prompt (its old drafts cut), and the reply is still plain's.
        let next = format!("{prompt}{}\nAnd the last line once more:\n", got.text);
        let expected = plain_session
            .generate(greedy(next.clone(), 24))
            .await
            .unwrap();
        let two = session.generate(greedy(next, 24)).await.unwrap();
        assert_eq!(two.text, expected.text);
        assert_eq!(two.reused_tokens, expected.reused_tokens);

        // Under a grammar that pins the reply down, drafts the grammar refuses are
        // never kept.
        let line = "src/cli.py:7: # TODO: read the delimiter from --sep";
        let mut pinned = greedy(copy_prompt(&drafting, "\nNow only the first line:"), 64);
        pinned.grammar = Some(only(line));
        let out = generate(&drafting, pinned).await;
        assert_eq!(out.text, line);
        assert!(out.drafted_tokens > 0, "{out:?}");
    });
}

#[test]
fn a_draft_model_with_another_tokenizer_is_refused_with_the_reason() {
    let _model = rein_test_support::model_lock();
    runtime().block_on(async {
        // SmolLM2 (49,152 tokens) cannot draft for Qwen2.5-Coder (151,936).
        let mut config = config(3);
        config.model_path = model_path("small");
        config.draft_model = Some(tiny_model());
        let error = Engine::load(config).await.unwrap_err().to_string();
        assert!(
            error.contains("the draft model cannot be used") && error.contains("tokenizer"),
            "{error}"
        );
        assert!(
            error.contains("49152") && error.contains("151936"),
            "{error}"
        );
    });
}
