//! Conformance with the canitoolcall fixtures (pinned 0.1.1, fetched by
//! `scripts/fetch-fixtures.sh`): each family's fixtures through the one-shot parse and
//! through the family's streaming parser under every chunking strategy of the corpus,
//! judged by the corpus's own checks.

mod chunking;
mod fixtures;
mod judge;
mod pretokenize;
mod pyrandom;
mod tokens;

use std::collections::BTreeMap;

use rein_format::hermes;
use rein_format::stream::{StreamEvent, StreamReply, THINK_CLOSE, THINK_OPEN};
use rein_format::Family;

use chunking::{group_sizes, split, Strategy};
use fixtures::Fixture;
use judge::{run_checks, ParseResult, Status};
use pretokenize::Pretok;
use tokens::TokenTexts;

/// The corpus's default set (`one`, `special`, `token`, `rand:1:8`..`rand:5:8`) plus
/// the synthetic character splits (seed 0 per character, seeds 1-5 random).
fn strategies() -> Vec<Strategy> {
    let mut all = vec![Strategy::One, Strategy::Special, Strategy::Token];
    all.extend((1..=5).map(|seed| Strategy::Rand { seed, max: 8 }));
    all.extend((0..=5).map(|seed| Strategy::Char { seed }));
    all
}

/// The generation prompt left a reasoning block open (Hermes: it ends with `<think>`).
fn reasoning_open(fixture: &Fixture, family: &fixtures::Family, parser: Family) -> bool {
    parser == Family::Hermes
        && fixture
            .generation_prompt(family)
            .is_some_and(|p| p.trim_end().ends_with(THINK_OPEN))
}

fn as_result(reply: &StreamReply) -> ParseResult {
    ParseResult {
        content: reply.content.clone(),
        reasoning: reply.reasoning.clone(),
        calls: reply
            .calls
            .iter()
            .map(|c| (c.name.clone(), c.arguments.to_string()))
            .collect(),
        exception: None,
    }
}

/// Events merged the way an OpenAI client merges stream deltas.
fn accumulate(events: &[StreamEvent]) -> ParseResult {
    let (mut content, mut reasoning) = (String::new(), String::new());
    let mut calls: BTreeMap<usize, (String, String)> = BTreeMap::new();
    for event in events {
        match event {
            StreamEvent::Content(t) => content.push_str(t),
            StreamEvent::Reasoning(t) => reasoning.push_str(t),
            StreamEvent::ToolCallStart { index, name } => {
                calls.entry(*index).or_default().0.push_str(name)
            }
            StreamEvent::ToolCallArguments { index, delta } => {
                calls.entry(*index).or_default().1.push_str(delta)
            }
            StreamEvent::ToolCallEnd { index } => {
                calls.entry(*index).or_default();
            }
        }
    }
    ParseResult {
        content: (!content.is_empty()).then_some(content),
        reasoning: (!reasoning.is_empty()).then_some(reasoning),
        calls: calls.into_values().collect(),
        exception: None,
    }
}

/// Text deltas for token groups: each group's bytes, an incomplete UTF-8 sequence at
/// a group's end held for the next group (as servers' detokenizers do).
fn token_deltas(groups: &[Vec<u32>], texts: &TokenTexts) -> Vec<String> {
    let mut held: Vec<u8> = Vec::new();
    let mut out = Vec::new();
    for group in groups {
        for id in group {
            held.extend_from_slice(&texts.texts[id]);
        }
        let valid = match std::str::from_utf8(&held) {
            Ok(_) => held.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(e) => panic!("token bytes are not UTF-8: {e}"),
        };
        let rest = held.split_off(valid);
        out.push(String::from_utf8(std::mem::replace(&mut held, rest)).expect("valid prefix"));
    }
    assert!(held.is_empty(), "the output ends on a whole character");
    out
}

fn deltas(fixture: &Fixture, strategy: Strategy, texts: &TokenTexts) -> Vec<String> {
    if let Strategy::Char { .. } | Strategy::One = strategy {
        let chars: Vec<char> = fixture.raw_output.chars().collect();
        let sizes = group_sizes(chars.len(), strategy, &[]);
        return split(&chars, &sizes)
            .into_iter()
            .map(String::from_iter)
            .collect();
    }
    let ids = fixture
        .output_token_ids
        .as_deref()
        .expect("output_token_ids");
    let special: Vec<bool> = ids.iter().map(|id| texts.markers.contains(id)).collect();
    let sizes = group_sizes(ids.len(), strategy, &special);
    token_deltas(&split(ids, &sizes), texts)
}

/// The text after the reasoning block, which the strict Hermes parser reads.
fn after_reasoning(text: &str, open: bool) -> &str {
    let starts = open || text.trim_start().starts_with(THINK_OPEN);
    match text.find(THINK_CLOSE) {
        Some(at) if starts => &text[at + THINK_CLOSE.len()..],
        None if starts => "",
        _ => text,
    }
}

/// One family's conformance run.
struct Spec {
    /// The corpus directory.
    slug: &'static str,
    /// rein's parser for it.
    family: Family,
    /// Which fixtures are in scope (the others are reported as not run).
    include: fn(&Fixture) -> bool,
    /// How text between markers is cut for token recovery.
    pretok: Pretok,
    /// Whether the reference models have different tokenizers (token texts are then
    /// recovered per model).
    per_model_tokens: bool,
}

fn everything(_: &Fixture) -> bool {
    true
}

/// Runs every in-scope fixture of `spec` under every strategy; panics on any failing
/// row; prints one summary line.
fn conformance(spec: &Spec) {
    let (family, all) = fixtures::load(spec.slug);
    assert!(!all.is_empty(), "no fixtures in {}", spec.slug);
    let fixtures: Vec<&Fixture> = all.iter().filter(|f| (spec.include)(f)).collect();
    let out_of_scope = all.len() - fixtures.len();
    // Token ids are per tokenizer: recover texts per reference model.
    let mut by_model: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (n, f) in fixtures.iter().enumerate() {
        let model = match spec.per_model_tokens {
            true => f.models.first().map(String::as_str).unwrap_or_default(),
            false => "",
        };
        by_model.entry(model).or_default().push(n);
    }
    let mut texts_of: Vec<Option<(usize, usize)>> = vec![None; fixtures.len()];
    let mut recovered: Vec<TokenTexts> = Vec::new();
    for members in by_model.values() {
        let pairs: Vec<(&[u32], &str)> = members
            .iter()
            .map(|&n| {
                let f = fixtures[n];
                let ids = f
                    .output_token_ids
                    .as_deref()
                    .expect("every fixture has token ids");
                (ids, f.raw_output.as_str())
            })
            .collect();
        let texts = tokens::recover(&pairs, &family.markers, spec.pretok);
        for (k, &n) in members.iter().enumerate() {
            if texts.complete.contains(&k) {
                texts_of[n] = Some((recovered.len(), k));
            }
        }
        recovered.push(texts);
    }
    // Where a tokenizer's own vocabulary is at hand (`token-texts/<slug>.json` and
    // `<slug>-*.json`, written by scripts/fetch-fixtures.sh when it can), every
    // fixture it rebuilds is split with it.
    let mut vocabularies: Vec<std::path::PathBuf> = std::fs::read_dir(
        fixtures::cache_dir()
            .join(fixtures::CORPUS)
            .join("token-texts"),
    )
    .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
    .unwrap_or_default();
    vocabularies.retain(|path| {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        name == format!("{}.json", spec.slug)
            || (name.starts_with(&format!("{}-", spec.slug)) && name.ends_with(".json"))
    });
    vocabularies.sort();
    let all_pairs: Vec<(&[u32], &str)> = fixtures
        .iter()
        .map(|f| {
            let ids = f.output_token_ids.as_deref().unwrap_or_default();
            (ids, f.raw_output.as_str())
        })
        .collect();
    let mut rebuilt = vec![false; fixtures.len()];
    for vocabulary in &vocabularies {
        let Some(texts) = tokens::from_vocabulary(vocabulary, &all_pairs) else {
            continue;
        };
        for &n in &texts.complete {
            if !rebuilt[n] {
                texts_of[n] = Some((recovered.len(), n));
                rebuilt[n] = true;
            }
        }
        recovered.push(texts);
    }
    let from_vocabulary = rebuilt.iter().filter(|r| **r).count();
    let strategies = strategies();
    let (mut pass, mut soft, mut fail) = (0, 0, 0);
    let (mut cross_checked, mut strict_refused, mut not_run) = (0, 0, 0);
    let mut failures = Vec::new();
    let mut soft_ids = Vec::new();
    for (n, fixture) in fixtures.iter().enumerate() {
        let texts = texts_of[n].map(|(group, _)| &recovered[group]);
        let open = reasoning_open(fixture, &family, spec.family);
        let cut_off = fixture.truncated();
        let reply = spec
            .family
            .parse_complete(&fixture.raw_output, open, cut_off);
        let mut parses = vec![("nonstream".to_string(), as_result(&reply))];
        for &strategy in &strategies {
            let needs_tokens = matches!(
                strategy,
                Strategy::Special | Strategy::Token | Strategy::Rand { .. }
            );
            let texts = match texts {
                Some(texts) => texts,
                None if needs_tokens => {
                    not_run += 1;
                    continue;
                }
                None => &recovered[0],
            };
            let mut parser = spec.family.stream(open);
            let mut events = Vec::new();
            for delta in deltas(fixture, strategy, texts) {
                events.extend(parser.push(&delta));
            }
            let finished = parser.finish(cut_off);
            events.extend(finished.events);
            assert_eq!(
                finished.reply,
                reply,
                "{} {}: stream reply",
                fixture.id,
                strategy.id()
            );
            parses.push((strategy.id(), accumulate(&events)));
        }
        // The strict parser, where it accepts the text, reads the same content and calls.
        let strict_text = match spec.family {
            Family::Hermes => after_reasoning(&fixture.raw_output, open),
            _ => fixture.raw_output.as_str(),
        };
        let strict_reply = match spec.family {
            Family::Hermes => hermes::parse_reply(strict_text),
            other => other.parse_reply(strict_text),
        };
        if let Ok(strict) = strict_reply {
            if reply.rejected.is_empty() {
                assert_eq!(
                    strict.content, reply.content,
                    "{}: content vs parse_reply",
                    fixture.id
                );
                assert_eq!(
                    strict.calls, reply.calls,
                    "{}: calls vs parse_reply",
                    fixture.id
                );
                cross_checked += 1;
            }
        }
        // The strict parser refuses only output the corpus marks as cut or malformed.
        if spec
            .family
            .parse_reply_checked(strict_text, cut_off, false)
            .is_err()
        {
            let marked = fixture
                .tags
                .iter()
                .any(|t| t == "truncated" || t == "malformed");
            assert!(
                marked,
                "{}: parse_reply_checked refused unmarked output",
                fixture.id
            );
            strict_refused += 1;
        }
        let realistic = |label: &str| !label.starts_with("char:");
        let rows = run_checks(fixture, &family, &parses, &realistic);
        let status = rows
            .iter()
            .filter(|r| realistic(&r.label))
            .map(|r| r.status)
            .max()
            .unwrap_or(Status::Pass);
        for r in rows.iter().filter(|r| r.status == Status::Fail) {
            failures.push(format!(
                "{} [{} / {}]: {}",
                fixture.id, r.check, r.label, r.detail
            ));
        }
        match status {
            Status::Pass => pass += 1,
            Status::SoftPass => {
                soft += 1;
                soft_ids.push(fixture.id.as_str());
            }
            Status::Fail => fail += 1,
        }
    }
    let with_tokens = texts_of.iter().filter(|t| t.is_some()).count();
    let ids: usize = recovered.iter().map(|t| t.texts.len()).sum();
    eprintln!(
        "{}: token texts: {ids} ids ({} sets), {from_vocabulary} fixtures rebuilt from the tokenizer's vocabulary; token strategies run on {with_tokens} of {} fixtures, {not_run} fixture-strategy pairs not run",
        spec.slug,
        recovered.len(),
        fixtures.len()
    );
    if let Some(dir) = std::env::var_os("REIN_DUMP_TOKEN_TEXTS") {
        for (k, texts) in recovered.iter().enumerate() {
            let dump: BTreeMap<u32, Vec<u8>> =
                texts.texts.iter().map(|(k, v)| (*k, v.clone())).collect();
            let path = std::path::Path::new(&dir).join(format!("{}-{k}.json", spec.slug));
            std::fs::write(path, serde_json::to_string(&dump).expect("json")).expect("dump");
        }
    }
    eprintln!(
        "{}: strict {} parser: {cross_checked} fixtures read identically, {strict_refused} refused (all tagged truncated/malformed)",
        spec.slug,
        spec.family
    );
    eprintln!(
        "canitoolcall {} ({}): {} fixtures x {} strategies: {pass} pass, {soft} soft-pass, {fail} fail; {out_of_scope} fixtures out of scope (not run)",
        spec.slug,
        spec.family,
        fixtures.len(),
        strategies.len()
    );
    if !soft_ids.is_empty() {
        eprintln!("{}: soft-pass: {}", spec.slug, soft_ids.join(", "));
    }
    assert!(
        failures.is_empty(),
        "failing rows:\n{}",
        failures.join("\n")
    );
    assert_eq!(fail, 0);
}

#[test]
fn canitoolcall_qwen3_hermes_fixtures_pass() {
    conformance(&Spec {
        slug: "qwen3-hermes",
        family: Family::Hermes,
        include: everything,
        pretok: Pretok::Qwen2,
        per_model_tokens: false,
    });
}

#[test]
fn canitoolcall_llama_json_fixtures_pass() {
    conformance(&Spec {
        slug: "llama",
        family: Family::Llama3,
        include: |f| f.tags.iter().any(|t| t == "x-llama-json"),
        pretok: Pretok::Llama3,
        per_model_tokens: false,
    });
}

#[test]
fn canitoolcall_mistral_fixtures_pass() {
    conformance(&Spec {
        slug: "mistral",
        family: Family::Mistral,
        include: everything,
        pretok: Pretok::Whole,
        per_model_tokens: true,
    });
}

#[test]
fn canitoolcall_gemma4_fixtures_pass() {
    conformance(&Spec {
        slug: "gemma4",
        family: Family::Gemma,
        include: everything,
        pretok: Pretok::Whole,
        per_model_tokens: false,
    });
}

#[test]
fn python_random_matches_cpython() {
    // CPython 3: [random.Random(s).randint(1, 8) for _ in range(12)] for s = 3 and 1.
    let mut three = pyrandom::PyRandom::new(3);
    let got: Vec<u32> = (0..12).map(|_| three.randint_from_1(8)).collect();
    assert_eq!(got, [4, 3, 6, 8, 2, 1, 8, 5, 4, 4, 8, 8]);
    let mut one = pyrandom::PyRandom::new(1);
    let got: Vec<u32> = (0..12).map(|_| one.randint_from_1(8)).collect();
    assert_eq!(got, [3, 2, 5, 2, 8, 8, 8, 7, 4, 2, 8, 1]);
}
