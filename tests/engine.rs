//! The llama.cpp engine on the real tiny model: determinism, stop reasons, streaming,
//! prefix reuse, limits, and the memory plan against what llama.cpp reports.

use rein_format::TurnSpec;
use rein_llama::{
    Engine, EngineConfig, EngineError, GenerateEvent, GenerateRequest, LocalModel, Prompt,
    SamplingParams, StopReason,
};
use rein_models::{plan_memory, GgufInfo, KvCacheType, Machine, PlanRequest};
use rein_protocol::Message;

use crate::support::tiny_model;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

async fn load(n_ctx: u32) -> Engine {
    let mut config = EngineConfig::new(tiny_model());
    config.n_ctx = Some(n_ctx);
    config.threads = Some(2);
    config.max_sessions = 2;
    Engine::load(config).await.unwrap()
}

fn chat_prompt(engine: &Engine, messages: &[Message]) -> String {
    let model = LocalModel::new(engine.clone()).unwrap();
    model
        .format()
        .prepare(&TurnSpec::plain(messages))
        .unwrap()
        .prompt
}

fn request(prompt: String, sampling: SamplingParams, max_tokens: u32) -> GenerateRequest {
    GenerateRequest {
        prompt: Prompt::Text(prompt),
        sampling,
        max_tokens,
        stop: Vec::new(),
        ignore_eog: false,
        no_blank: false,
        grammar: None,
        persist_prefix: None,
    }
}

fn sampled(seed: u32) -> SamplingParams {
    SamplingParams {
        temperature: 1.0,
        seed,
        ..SamplingParams::default()
    }
}

#[test]
fn same_seed_and_input_give_the_same_output() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    runtime().block_on(async {
        let engine = load(1024).await;
        let prompt = chat_prompt(
            &engine,
            &[Message::user("Write a short poem about rivers.")],
        );
        let mut outputs = Vec::new();
        for seed in [7, 7, 8, 9, 10] {
            // A fresh session each time: nothing carried over but the seed.
            let mut session = engine.session().await.unwrap();
            let out = session
                .generate(request(prompt.clone(), sampled(seed), 40))
                .await
                .unwrap();
            assert_eq!(out.tokens.len(), 40);
            outputs.push(out.text);
        }
        assert_eq!(outputs[0], outputs[1], "seed 7 twice must match");
        assert!(
            outputs[2..].iter().any(|o| o != &outputs[0]),
            "different seeds should not all reproduce seed 7's text: {outputs:?}"
        );

        // Same seed on a second, independently loaded engine.
        let other = load(1024).await;
        let mut session = other.session().await.unwrap();
        let again = session
            .generate(request(prompt, sampled(7), 40))
            .await
            .unwrap();
        assert_eq!(again.text, outputs[0]);
    });
}

#[test]
fn a_generation_that_loops_is_cut_early() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    runtime().block_on(async {
        let engine = load(2048).await;
        let mut session = engine.session().await.unwrap();
        // Raw text, no chat turn: greedy decoding continues the pattern.
        let prompt = "ok ".repeat(120);
        let looped = session
            .generate(request(prompt.clone(), SamplingParams::greedy(), 600))
            .await
            .unwrap();
        assert_eq!(looped.stop_reason, StopReason::Loop, "{:?}", looped.text);
        assert!(looped.tokens.len() < 600, "{}", looped.tokens.len());
        // A benchmark's fixed count (ignore_eog) runs to the end regardless.
        let mut fixed = request(prompt, SamplingParams::greedy(), 200);
        fixed.ignore_eog = true;
        let fixed = session.generate(fixed).await.unwrap();
        assert_eq!(fixed.stop_reason, StopReason::MaxTokens);
        assert_eq!(fixed.tokens.len(), 200);
    });
}

#[test]
fn stop_reasons_eog_max_tokens_stop_string_and_context_full() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    runtime().block_on(async {
        let engine = load(1024).await;
        let mut session = engine.session().await.unwrap();
        let prompt = chat_prompt(&engine, &[Message::user("Say hi")]);

        let eog = session
            .generate(request(prompt.clone(), SamplingParams::greedy(), 200))
            .await
            .unwrap();
        assert_eq!(eog.stop_reason, StopReason::EndOfGeneration, "{eog:?}");
        assert!(eog.tokens.len() < 200);

        let capped = session
            .generate(request(prompt.clone(), SamplingParams::greedy(), 3))
            .await
            .unwrap();
        assert_eq!(capped.stop_reason, StopReason::MaxTokens);
        assert_eq!(capped.tokens.len(), 3);
        assert!(
            eog.text.starts_with(&capped.text),
            "{:?} vs {:?}",
            eog.text,
            capped.text
        );

        // Stop at a word from the middle of the greedy reply: the text before it stays.
        let words: Vec<&str> = eog.text.split_whitespace().collect();
        assert!(
            words.len() >= 3,
            "reply too short to pick a stop word: {:?}",
            eog.text
        );
        let stop_word = words[words.len() / 2].to_string();
        let at = eog.text.find(&stop_word).unwrap();
        let mut with_stop = request(prompt, SamplingParams::greedy(), 200);
        with_stop.stop = vec![stop_word.clone()];
        let stopped = session.generate(with_stop).await.unwrap();
        assert_eq!(stopped.stop_reason, StopReason::StopString(stop_word));
        assert_eq!(stopped.text, eog.text[..at]);
        drop(session);

        // A prompt that leaves four free cells: the context fills before 200 tokens.
        let small = load(256).await;
        // A session may use its share of the context (two sessions share 256).
        let n_ctx = (small.info().n_ctx / small.info().max_sessions) as usize;
        let mut words = String::from("Repeat these words:");
        let mut prompt = String::new();
        for i in 0.. {
            let candidate = chat_prompt(&small, &[Message::user(format!("{words} w{i}"))]);
            if small.tokenize(&candidate, true).await.unwrap().len() > n_ctx - 4 {
                break;
            }
            words.push_str(&format!(" w{i}"));
            prompt = candidate;
        }
        let mut session = small.session().await.unwrap();
        let full = session
            .generate(request(prompt, SamplingParams::greedy(), 200))
            .await
            .unwrap();
        assert_eq!(full.stop_reason, StopReason::ContextFull, "{full:?}");
        assert_eq!(full.prompt_tokens + full.tokens.len(), n_ctx + 1);
    });
}

#[test]
fn a_reply_that_may_not_be_blank_says_something_before_it_ends() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    runtime().block_on(async {
        let engine = load(1024).await;
        let mut session = engine.session().await.unwrap();
        let prompt = chat_prompt(&engine, &[Message::user("Say hi")]);
        let reply = session
            .generate(request(prompt.clone(), SamplingParams::greedy(), 200))
            .await
            .unwrap();
        assert_eq!(reply.stop_reason, StopReason::EndOfGeneration);
        // The prompt already holds the whole reply: the model ends at once.
        let done = format!("{prompt}{}", reply.text);
        let blank = session
            .generate(request(done.clone(), SamplingParams::greedy(), 40))
            .await
            .unwrap();
        assert_eq!(blank.stop_reason, StopReason::EndOfGeneration, "{blank:?}");
        assert!(blank.text.trim().is_empty(), "{blank:?}");
        // Masked until it says something, it goes on, greedy and sampled alike.
        for sampling in [SamplingParams::greedy(), sampled(3)] {
            let mut no_blank = request(done.clone(), sampling, 40);
            no_blank.no_blank = true;
            let said = session.generate(no_blank).await.unwrap();
            assert!(!said.text.trim().is_empty(), "{said:?}");
        }
    });
}

#[test]
fn streaming_chunks_add_up_to_the_result() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    runtime().block_on(async {
        let engine = load(1024).await;
        let mut session = engine.session().await.unwrap();
        let prompt = chat_prompt(&engine, &[Message::user("Name three colours.")]);
        let mut stream = session
            .generate_stream(request(prompt.clone(), SamplingParams::greedy(), 30))
            .unwrap();
        let mut chunks = Vec::new();
        let output = loop {
            match stream.next().await.unwrap().unwrap() {
                GenerateEvent::Text(chunk) => chunks.push(chunk),
                GenerateEvent::Done(output) => break output,
            }
        };
        assert!(chunks.len() > 1, "expected several chunks, got {chunks:?}");
        assert_eq!(chunks.concat(), output.text);

        let whole = session
            .generate(request(prompt, SamplingParams::greedy(), 30))
            .await
            .unwrap();
        assert_eq!(whole.text, output.text);
    });
}

#[test]
fn dropping_a_stream_cancels_and_the_engine_goes_on() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    runtime().block_on(async {
        let engine = load(1024).await;
        let mut session = engine.session().await.unwrap();
        let prompt = chat_prompt(&engine, &[Message::user("Tell me a long story.")]);
        let mut stream = session
            .generate_stream(request(prompt.clone(), SamplingParams::greedy(), 500))
            .unwrap();
        assert!(matches!(
            stream.next().await,
            Some(Ok(GenerateEvent::Text(_)))
        ));
        drop(stream);
        let out = session
            .generate(request(prompt, SamplingParams::greedy(), 5))
            .await
            .unwrap();
        assert_eq!(out.tokens.len(), 5);
    });
}

#[test]
fn the_last_handle_dropped_mid_generation_ends_the_owner_thread_before_returning() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    // A copy of its own, so the mapping seen below is this engine's alone.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("own-copy.gguf");
    std::fs::copy(crate::support::tiny_model(), &copy).unwrap();
    let mapped = || {
        std::fs::read_to_string("/proc/self/maps")
            .unwrap()
            .contains(copy.to_str().unwrap())
    };
    runtime().block_on(async {
        let mut config = EngineConfig::new(copy.clone());
        config.n_ctx = Some(1024);
        config.threads = Some(2);
        config.use_mmap = true;
        let engine = Engine::load(config).await.unwrap();
        assert!(mapped(), "the model file is mapped while the engine lives");
        let mut session = engine.session().await.unwrap();
        let prompt = chat_prompt(&engine, &[Message::user("Tell me a long story.")]);
        let mut long = request(prompt, SamplingParams::greedy(), 900);
        long.ignore_eog = true;
        let mut stream = session.generate_stream(long).unwrap();
        assert!(matches!(
            stream.next().await,
            Some(Ok(GenerateEvent::Text(_)))
        ));
        // The generation is still running when the last handle (the session's) goes.
        drop(engine);
        drop(session);
        assert!(
            !mapped(),
            "the owner thread had not freed the model when the last drop returned"
        );
        // What the stream still holds ends, if with a `Done`, with a cancelled one.
        while let Some(event) = stream.next().await {
            if let Ok(GenerateEvent::Done(output)) = event {
                assert_eq!(output.stop_reason, StopReason::Cancelled);
                assert!(output.tokens.len() < 900);
            }
        }
    });
}

#[test]
fn a_second_turn_reuses_the_cached_prefix_with_identical_output() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    runtime().block_on(async {
        let engine = load(2048).await;
        let first_turn = vec![Message::user("What is the capital of France?")];
        let mut session = engine.session().await.unwrap();
        let first = session
            .generate(request(
                chat_prompt(&engine, &first_turn),
                SamplingParams::greedy(),
                20,
            ))
            .await
            .unwrap();
        assert_eq!(first.reused_tokens, 0);

        let mut second_turn = first_turn.clone();
        second_turn.push(Message::assistant(first.text.clone()));
        second_turn.push(Message::user("And of Italy?"));
        let prompt = chat_prompt(&engine, &second_turn);
        let reused = session
            .generate(request(prompt.clone(), SamplingParams::greedy(), 20))
            .await
            .unwrap();
        assert!(
            reused.reused_tokens >= first.prompt_tokens,
            "reused {} of a {}-token first prompt",
            reused.reused_tokens,
            first.prompt_tokens
        );
        // Without reuse: another engine, so nothing is cached or shared.
        let other = load(2048).await;
        let mut fresh_session = other.session().await.unwrap();
        let fresh = fresh_session
            .generate(request(prompt, SamplingParams::greedy(), 20))
            .await
            .unwrap();
        assert_eq!(fresh.reused_tokens, 0);
        assert_eq!(reused.text, fresh.text);
    });
}

#[test]
fn limits_are_errors_not_crashes() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    runtime().block_on(async {
        let engine = load(256).await;
        assert_eq!(engine.info().n_ctx, 256);
        let mut session = engine.session().await.unwrap();
        let long = "word ".repeat(400);
        let err = session
            .generate(request(long, SamplingParams::greedy(), 5))
            .await
            .unwrap_err();
        assert!(
            // Two sessions share the 256 tokens: a prompt is measured against one share.
            matches!(err, EngineError::PromptTooLong { n_ctx: 128, .. }),
            "{err}"
        );
        let err = session
            .generate(request(String::new(), SamplingParams::greedy(), 5))
            .await
            .unwrap_err();
        assert!(matches!(err, EngineError::EmptyPrompt), "{err}");
        let mut bad = request(String::new(), SamplingParams::greedy(), 5);
        bad.prompt = Prompt::Tokens(vec![1, 999_999]);
        let err = session.generate(bad).await.unwrap_err();
        assert!(matches!(err, EngineError::BadToken(999_999)), "{err}");

        // Both sessions taken: a third is refused at once by try_session, and freed
        // by a drop.
        let second = engine.session().await.unwrap();
        let err = engine.try_session().await.unwrap_err();
        assert!(matches!(err, EngineError::NoFreeSession(2)), "{err}");
        drop(second);
        let mut third = engine.session().await.unwrap();
        let out = third
            .generate(request("Hello".into(), SamplingParams::greedy(), 2))
            .await
            .unwrap();
        assert_eq!(out.tokens.len(), 2);
    });
}

#[test]
fn tokenize_round_trips() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    runtime().block_on(async {
        let engine = load(256).await;
        let text = "Hello, wörld! <|im_start|>";
        let tokens = engine.tokenize(text, false).await.unwrap();
        assert!(
            tokens.contains(&1),
            "<|im_start|> is parsed as its special token: {tokens:?}"
        );
        assert_eq!(
            engine
                .detokenize(&tokens[..tokens.len() - 1])
                .await
                .unwrap(),
            "Hello, wörld! "
        );
    });
}

#[test]
fn memory_plan_matches_what_llama_cpp_allocates() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    let path = tiny_model();
    let info = GgufInfo::read(&path).unwrap();
    // llama.cpp's log for this model at n_ctx 4096: "KV buffer size = 90.00 MiB"
    // (K f16 45.00 MiB + V f16 45.00 MiB) and "model buffer size = 92.10 MiB".
    let plan = plan_memory(&info, PlanRequest::new(4096, 1), &Machine::default());
    assert_eq!(plan.ram.kv_per_session, 90 * 1024 * 1024);
    let mut q8 = PlanRequest::new(4096, 1);
    q8.kv_type = KvCacheType::Q8_0;
    // q8_0: 34 bytes per 32 values.
    assert_eq!(
        plan_memory(&info, q8, &Machine::default())
            .ram
            .kv_per_session,
        90 * 1024 * 1024 / 64 * 34
    );
    assert_eq!(info.layer_bytes.len(), 30);
    assert!(info.layer_bytes.iter().sum::<u64>() + info.output_bytes < info.weights_bytes);
    runtime().block_on(async {
        let engine = load(256).await;
        assert_eq!(plan.ram.weights, engine.info().weights_bytes);
        assert_eq!(info.vocab_size, engine.info().n_vocab as u64);
        assert_eq!(info.parameter_count, engine.info().n_params);
        assert_eq!(
            info.context_length,
            Some(u64::from(engine.info().n_ctx_train))
        );
    });
}

#[test]
fn a_grammar_llama_cpp_cannot_compile_is_an_error_and_the_session_survives() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    runtime().block_on(async {
        let engine = load(256).await;
        let mut session = engine.session().await.unwrap();
        let mut bad = request("Hello".into(), SamplingParams::greedy(), 4);
        bad.grammar = Some(rein_llama::Grammar::strict("root ::= ( \"a\" "));
        let err = session.generate(bad).await.unwrap_err();
        assert!(matches!(err, EngineError::Grammar(_)), "{err}");
        let mut good = request("Hello".into(), SamplingParams::greedy(), 4);
        good.grammar = Some(rein_llama::Grammar::strict(r#"root ::= "yes" | "no""#));
        let out = session.generate(good).await.unwrap();
        assert!(out.text == "yes" || out.text == "no", "{:?}", out.text);
    });
}
