//! Many sessions on one engine, on the real tiny model: continuous batching gives each
//! session the text it would get alone, and admission control queues sessions beyond
//! what the memory planner admits instead of failing them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rein_llama::{Engine, EngineConfig, EngineError, GenerateRequest, Prompt, SamplingParams};
use rein_models::{plan_memory, GgufInfo, Machine, PlanRequest};

use crate::support::tiny_model;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

async fn load(max_sessions: u32, queue_timeout: Duration) -> Engine {
    let mut config = EngineConfig::new(tiny_model());
    config.n_ctx = Some(2048);
    config.threads = Some(2);
    config.max_sessions = max_sessions;
    config.queue_timeout = queue_timeout;
    Engine::load(config).await.unwrap()
}

fn greedy(prompt: &str, max_tokens: u32) -> GenerateRequest {
    let mut request = GenerateRequest::new(Prompt::Text(prompt.to_string()));
    request.sampling = SamplingParams::greedy();
    request.max_tokens = max_tokens;
    request.ignore_eog = true;
    request
}

fn request(prompt: &str, seed: u32, max_tokens: u32) -> GenerateRequest {
    let mut request = GenerateRequest::new(Prompt::Text(prompt.to_string()));
    request.sampling = SamplingParams {
        temperature: 0.8,
        seed,
        ..SamplingParams::default()
    };
    request.max_tokens = max_tokens;
    request
}

/// Prompts whose greedy continuation is certain: the count goes on.
const COUNTING: [&str; 3] = [
    "1, 2, 3, 4, 5, 6, 7, 8,",
    "2, 4, 6, 8, 10, 12, 14,",
    "10, 20, 30, 40, 50, 60,",
];

const PROMPTS: [&str; 4] = [
    "The capital of France is",
    "Once upon a time, a small robot",
    "def fibonacci(n):",
    "The three primary colors are",
];

#[test]
fn batched_sessions_get_the_text_they_would_get_alone() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    runtime().block_on(async {
        // Each prompt alone, on an engine of its own (nothing cached, nothing shared).
        let mut alone = Vec::new();
        for prompt in PROMPTS {
            let engine = load(1, Duration::from_secs(30)).await;
            let mut session = engine.session().await.unwrap();
            let out = session.generate(greedy(prompt, 24)).await.unwrap();
            alone.push(out.text);
        }
        let engine = load(4, Duration::from_secs(30)).await;
        // Same requests, all at once: they share every decode step.
        let mut tasks = Vec::new();
        for prompt in PROMPTS {
            let engine = engine.clone();
            let prompt = prompt.to_string();
            tasks.push(tokio::spawn(async move {
                let mut session = engine.session().await.unwrap();
                session.generate(greedy(&prompt, 24)).await.unwrap()
            }));
        }
        for (i, task) in tasks.into_iter().enumerate() {
            let together = task.await.unwrap();
            assert_eq!(together.text, alone[i], "prompt {i}");
            assert_eq!(together.tokens.len(), 24);
        }
    });
}

#[test]
fn a_long_prompt_joining_running_sessions_shares_their_decodes_and_changes_no_text() {
    let _model = rein_test_support::model_lock();
    runtime().block_on(async {
        // A prompt several chunks long (chunks of 128 tokens while others run).
        let long = format!(
            "{} Summarize the log above in one sentence:",
            "The agent read the file, ran the tests and wrote down what it found. ".repeat(40)
        );
        // Alone, on an engine of its own (nothing in any cache to copy from).
        let alone = {
            let engine = load(1, Duration::from_secs(30)).await;
            let mut session = engine.session().await.unwrap();
            session.generate(greedy(&long, 16)).await.unwrap()
        };
        let mut texts = Vec::new();
        for mixed in [true, false] {
            let mut config = EngineConfig::new(tiny_model());
            config.n_ctx = Some(4096);
            config.threads = Some(2);
            config.max_sessions = 4;
            config.mixed_batches = mixed;
            let engine = Engine::load(config).await.unwrap();
            // Three sessions generate; the long prompt joins once they have started.
            let (started, mut ready) = tokio::sync::mpsc::unbounded_channel();
            let mut running = Vec::new();
            for prompt in COUNTING {
                let (engine, started, prompt) =
                    (engine.clone(), started.clone(), prompt.to_string());
                running.push(tokio::spawn(async move {
                    let mut session = engine.session().await.unwrap();
                    let mut stream = session.generate_stream(greedy(&prompt, 24)).unwrap();
                    let mut text = String::new();
                    while let Some(event) = stream.next().await {
                        match event.unwrap() {
                            rein_llama::GenerateEvent::Text(chunk) => {
                                if text.is_empty() {
                                    started.send(()).unwrap();
                                }
                                text.push_str(&chunk);
                            }
                            rein_llama::GenerateEvent::Done(output) => return output,
                        }
                    }
                    unreachable!("the stream ends with Done")
                }));
            }
            for _ in 0..3 {
                ready.recv().await.unwrap();
            }
            let mut session = engine.session().await.unwrap();
            let joined = session.generate(greedy(&long, 16)).await.unwrap();
            assert!(joined.prompt_tokens > 3 * 128, "{}", joined.prompt_tokens);
            assert_eq!(joined.reused_tokens, 0, "the whole prompt was evaluated");
            match mixed {
                true => assert!(joined.mixed_tokens >= 128, "{joined:?}"),
                false => assert_eq!(joined.mixed_tokens, 0),
            }
            assert_eq!(joined.text, alone.text, "mixed batches: {mixed}");
            let mut others = Vec::new();
            for task in running {
                let output = task.await.unwrap();
                assert_eq!(output.tokens.len(), 24);
                others.push(output.text);
            }
            texts.push(others);
        }
        // The running sessions count on the same whether the prompt's chunks shared
        // their decodes or not: a token read from the wrong row, or put at the wrong
        // position, breaks the count. (Counting leaves no near tie for a batch's
        // rounding to tip: open text can part ways there, docs/decisions/0032.)
        assert_eq!(texts[0], texts[1]);
        assert!(texts[0][0].starts_with(" 9, 10, 11"), "{:?}", texts[0]);
    });
}

#[test]
fn sessions_beyond_the_memory_budget_wait_their_turn_and_all_finish() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    // A memory budget with room for three sessions of 512 tokens, not four.
    let info = GgufInfo::read(&tiny_model()).unwrap();
    let one = plan_memory(&info, PlanRequest::new(512, 1), &Machine::default());
    let budget = Machine {
        ram: Some((one.ram.total(3) + one.ram.kv_per_session / 2) / 9 * 10),
        ..Machine::default()
    };
    let plan = plan_memory(&info, PlanRequest::new(512, 8), &budget);
    assert!(!plan.fits());
    assert_eq!(plan.sessions_fit, 3);
    runtime().block_on(async {
        let engine = load(plan.sessions_fit, Duration::from_secs(120)).await;
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for i in 0..8u32 {
            let engine = engine.clone();
            let (running, peak) = (Arc::clone(&running), Arc::clone(&peak));
            tasks.push(tokio::spawn(async move {
                let mut session = engine.session().await?;
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                let mut long = request(PROMPTS[i as usize % 4], i, 16);
                long.ignore_eog = true;
                let out = session.generate(long).await;
                running.fetch_sub(1, Ordering::SeqCst);
                out
            }));
        }
        for task in tasks {
            let out = task.await.unwrap().expect("every session finishes");
            assert_eq!(out.tokens.len(), 16);
        }
        let peak = peak.load(Ordering::SeqCst);
        assert!((1..=3).contains(&peak), "at most 3 at once, saw {peak}");

        // A session that cannot get a slot in time is refused with a clear error.
        let short = load(1, Duration::from_millis(100)).await;
        let _held = short.session().await.unwrap();
        let err = short.session().await.unwrap_err();
        assert!(matches!(err, EngineError::NoFreeSession(1)), "{err}");
        assert!(err.to_string().contains("none was freed in time"), "{err}");
    });
}

#[test]
fn dropping_a_session_mid_generation_frees_its_slot_for_the_queue() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    runtime().block_on(async {
        let engine = load(1, Duration::from_secs(30)).await;
        let mut first = engine.session().await.unwrap();
        let mut stream = first.generate_stream(request(PROMPTS[1], 1, 400)).unwrap();
        let _ = stream.next().await;
        let waiter = {
            let engine = engine.clone();
            tokio::spawn(async move {
                let mut session = engine.session().await?;
                session.generate(request(PROMPTS[0], 2, 8)).await
            })
        };
        drop(stream);
        drop(first);
        let out = waiter.await.unwrap().unwrap();
        assert_eq!(out.tokens.len(), 8);
    });
}

#[test]
fn a_shared_prefix_is_copied_from_another_session_with_identical_output() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    runtime().block_on(async {
        let engine = load(2, Duration::from_secs(30)).await;
        let system = "You are a careful assistant. You answer questions about geography, \
                      history and science in one short sentence, without lists. ";
        let mut first = engine.session().await.unwrap();
        let a = first
            .generate(greedy(
                &format!("{system}Question: what is the capital of Spain?"),
                12,
            ))
            .await
            .unwrap();
        assert_eq!(a.shared_tokens, 0);
        let prompt = format!("{system}Question: what is the capital of Japan?");
        let mut second = engine.session().await.unwrap();
        let b = second.generate(greedy(&prompt, 12)).await.unwrap();
        assert!(b.shared_tokens >= 16, "copied {} tokens", b.shared_tokens);
        assert_eq!(b.reused_tokens, b.shared_tokens);
        // The same prompt computed from scratch on another engine.
        let other = load(1, Duration::from_secs(30)).await;
        let mut alone = other.session().await.unwrap();
        let c = alone.generate(greedy(&prompt, 12)).await.unwrap();
        assert_eq!(c.reused_tokens, 0);
        assert_eq!(b.text, c.text);
        assert_eq!(b.tokens, c.tokens);
    });
}

#[test]
fn a_closed_sessions_tokens_serve_the_next_request_of_the_conversation() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    runtime().block_on(async {
        let engine = load(2, Duration::from_secs(30)).await;
        let turn_one = "The history of the city of Rome begins with its founding. \
                        Tell me about the first kings of Rome in two sentences.";
        let first = {
            let mut session = engine.session().await.unwrap();
            session.generate(greedy(turn_one, 16)).await.unwrap()
        };
        // The session is gone; the next request repeats the conversation and adds to it.
        let turn_two = format!("{turn_one}{} And the last king?", first.text);
        let mut session = engine.session().await.unwrap();
        let second = session.generate(greedy(&turn_two, 8)).await.unwrap();
        assert!(
            second.reused_tokens >= first.prompt_tokens,
            "reused {} tokens of a {}-token first prompt",
            second.reused_tokens,
            first.prompt_tokens
        );
    });
}

#[test]
fn each_session_stays_inside_its_share_of_the_context() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    runtime().block_on(async {
        let mut config = EngineConfig::new(tiny_model());
        config.n_ctx = Some(512);
        config.threads = Some(2);
        config.max_sessions = 2;
        let engine = Engine::load(config).await.unwrap();
        let long =
            |topic: &str| format!("{topic}: {}", "Tell me more about the weather. ".repeat(25));
        // Two sessions at once, each with a long prompt and a long allowance: each stops
        // at its share (256 tokens), so neither runs the shared cache out of room.
        let mut first = engine.session().await.unwrap();
        let mut second = engine.session().await.unwrap();
        let (a, b) = tokio::join!(
            first.generate(greedy(&long("rain"), 400)),
            second.generate(greedy(&long("snow"), 400)),
        );
        for out in [a.unwrap(), b.unwrap()] {
            assert!(
                out.prompt_tokens > 150,
                "{} prompt tokens",
                out.prompt_tokens
            );
            // The last token is sampled but never enters the cache.
            assert!(out.prompt_tokens + out.tokens.len() <= 257);
            assert!(
                matches!(
                    out.stop_reason,
                    rein_llama::StopReason::ContextFull | rein_llama::StopReason::EndOfGeneration
                ),
                "{:?} after {} tokens",
                out.stop_reason,
                out.tokens.len()
            );
        }
        // A prompt beyond the share is refused up front, naming the share.
        let err = first
            .generate(greedy(&long("wind").repeat(2), 10))
            .await
            .unwrap_err();
        assert!(
            matches!(err, EngineError::PromptTooLong { n_ctx: 256, .. }),
            "{err}"
        );
    });
}
