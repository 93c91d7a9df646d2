//! Per-turn harness overhead, model time excluded: a scripted backend answers at once,
//! so a run's wall time is the loop itself (rendering the request, parsing, name and
//! schema checks, scheduling, running a small `read_file`, history and trace writes)
//! divided by its turns.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use rein_agent::{Agent, Profile, RunConfig};
use rein_protocol::TraceWriter;
use rein_test_support::ScriptedBackend;
use rein_tools::{Registry, ToolLimits, Workspace};

const TURNS: usize = 10;

fn turn_overhead(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    for i in 0..TURNS {
        std::fs::write(
            dir.path().join(format!("f{i}.txt")),
            "line one\nline two\n".repeat(20),
        )
        .expect("write");
    }
    let trace_dir = tempfile::tempdir().expect("temp dir");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let mut group = c.benchmark_group("agent");
    group.measurement_time(Duration::from_secs(10));
    for (label, with_trace) in [("run_of_11_turns", false), ("run_of_11_turns_traced", true)] {
        group.bench_function(label, |b| {
            b.iter_batched(
                || {
                    let mut replies: Vec<String> = (0..TURNS)
                        .map(|i| format!("<tool_call>\n{{\"name\": \"read_file\", \"arguments\": {{\"path\": \"f{i}.txt\", \"limit\": 5}}}}\n</tool_call>"))
                        .collect();
                    replies.push("All files read.".into());
                    let workspace = Workspace::new(dir.path(), ToolLimits::default()).expect("workspace");
                    let agent = Agent::new(
                        ScriptedBackend::new(replies, true),
                        workspace,
                        &Registry::builtin(),
                        RunConfig::new(Profile::Full),
                    )
                    .expect("agent");
                    let trace = with_trace.then(|| {
                        TraceWriter::create(trace_dir.path().join("bench.jsonl")).expect("trace")
                    });
                    (agent, trace)
                },
                |(mut agent, trace)| runtime.block_on(agent.run("read every file", trace)),
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, turn_overhead);
criterion_main!(benches);
