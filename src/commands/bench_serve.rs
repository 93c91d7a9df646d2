//! `rein bench serve`: a bounded load test over loopback HTTP. Many clients at once
//! send chat requests (half with a tool to call) to `rein serve` (started in-process
//! unless `--url` names a running one); latency percentiles, errors and aggregate
//! generated tokens/s are reported.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use rein_format::ToolFormat;
use rein_llama::{Engine, LocalModel};
use rein_serve::{AppState, ServedModel};
use serde_json::{json, Value};

/// Arguments of `rein bench serve`.
#[derive(Args)]
pub struct ServeBenchArgs {
    /// The model and how it is loaded (ignored with --url).
    #[command(flatten)]
    pub model: super::ModelArgs,
    /// A running server's base URL (`http://127.0.0.1:8080/v1`) instead of one started here.
    #[arg(long)]
    pub url: Option<String>,
    /// Clients sending at once.
    #[arg(long, default_value_t = 50)]
    pub clients: usize,
    /// Requests each client sends, one after another.
    #[arg(long, default_value_t = 2)]
    pub requests: usize,
    /// Most tokens per reply.
    #[arg(long, default_value_t = 48)]
    pub max_tokens: u32,
    /// Sessions of the in-process server.
    #[arg(long, default_value_t = 4)]
    pub sessions: u32,
    /// Tokens per request of the in-process server.
    #[arg(long, default_value_t = 1024)]
    pub ctx: u32,
    /// Print one JSON object as the last line.
    #[arg(long)]
    pub json: bool,
}

/// One request's outcome.
struct Sample {
    ok: bool,
    latency: Duration,
    completion_tokens: u64,
    error: Option<String>,
}

/// Runs the load test.
pub fn run(args: ServeBenchArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let (base, _stop) = match &args.url {
        Some(url) => (url.trim_end_matches('/').to_string(), None),
        None => {
            let (address, stop) = runtime.block_on(start_server(&args))?;
            (format!("http://{address}/v1"), Some(stop))
        }
    };
    let started = Instant::now();
    let threads: Vec<_> = (0..args.clients)
        .map(|client| {
            let base = base.clone();
            let (requests, max_tokens) = (args.requests, args.max_tokens);
            std::thread::spawn(move || {
                (0..requests)
                    .map(|n| one_request(&base, client, n, max_tokens))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut samples = Vec::new();
    for thread in threads {
        samples.extend(
            thread
                .join()
                .map_err(|_| anyhow::anyhow!("a client thread panicked"))?,
        );
    }
    let wall = started.elapsed();
    report(&args, &samples, wall)
}

async fn start_server(
    args: &ServeBenchArgs,
) -> anyhow::Result<(SocketAddr, tokio::sync::oneshot::Sender<()>)> {
    let path = args.model.resolve()?;
    let sessions = args.sessions.max(1);
    let mut config = args.model.engine_config(path, Some(args.ctx), sessions)?;
    config.queue_timeout = Duration::from_secs(900);
    let engine = Engine::load(config).await?;
    let model = ServedModel::new(
        LocalModel::new(engine)?,
        args.model.model.clone(),
        ToolFormat::Native,
        args.ctx,
    );
    let state = Arc::new(AppState::new(model, None, 1 << 20));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(rein_serve::serve(
        listener,
        rein_serve::router(state),
        async {
            let _ = stopped.await;
        },
    ));
    Ok((address, stop))
}

/// Client `client`'s `n`th request: a question of its own; every other one offers a tool.
fn one_request(base: &str, client: usize, n: usize, max_tokens: u32) -> Sample {
    let city = ["Paris", "Oslo", "Lima", "Kyoto", "Cairo", "Quito", "Perth"][(client + n) % 7];
    let mut body = json!({
        "model": "bench",
        "messages": [{"role": "user", "content": format!("Client {client}, question {n}: what is the weather like in {city}?")}],
        "temperature": 0.7,
        "seed": client * 100 + n,
        "max_tokens": max_tokens,
    });
    if (client + n) % 2 == 0 {
        body["tools"] = json!([{"type": "function", "function": {"name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]);
        body["tool_choice"] = json!("required");
        body["parallel_tool_calls"] = json!(false);
    }
    let started = Instant::now();
    let response = ureq::post(&format!("{base}/chat/completions"))
        .timeout(Duration::from_secs(900))
        .send_json(body);
    let latency = started.elapsed();
    let failed = |error: String| Sample {
        ok: false,
        latency,
        completion_tokens: 0,
        error: Some(error),
    };
    match response {
        Ok(response) => match response.into_json::<Value>() {
            Ok(value) => Sample {
                ok: value["choices"][0]["message"].is_object(),
                latency,
                completion_tokens: value["usage"]["completion_tokens"].as_u64().unwrap_or(0),
                error: None,
            },
            Err(e) => failed(format!("unreadable body: {e}")),
        },
        Err(ureq::Error::Status(code, response)) => failed(format!(
            "{code}: {}",
            response.into_string().unwrap_or_default()
        )),
        Err(e) => failed(e.to_string()),
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() as f64 - 1.0)).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn report(args: &ServeBenchArgs, samples: &[Sample], wall: Duration) -> anyhow::Result<()> {
    let mut latencies: Vec<f64> = samples
        .iter()
        .filter(|s| s.ok)
        .map(|s| s.latency.as_secs_f64() * 1000.0)
        .collect();
    latencies.sort_by(f64::total_cmp);
    let errors = samples.iter().filter(|s| !s.ok).count();
    let tokens: u64 = samples.iter().map(|s| s.completion_tokens).sum();
    let result = json!({
        "clients": args.clients,
        "requests": samples.len(),
        "errors": errors,
        "p50_ms": percentile(&latencies, 50.0).round(),
        "p99_ms": percentile(&latencies, 99.0).round(),
        "max_ms": latencies.last().copied().unwrap_or(0.0).round(),
        "completion_tokens": tokens,
        "aggregate_tokens_per_s": (tokens as f64 / wall.as_secs_f64() * 10.0).round() / 10.0,
        "wall_s": (wall.as_secs_f64() * 10.0).round() / 10.0,
        "sessions": args.url.is_none().then_some(args.sessions),
        "first_error": samples.iter().find_map(|s| s.error.clone()),
    });
    if args.json {
        println!("{result}");
    } else {
        println!(
            "{} requests from {} clients in {:.1} s: {} errors; latency p50 {} ms, p99 {} ms; {:.1} generated tokens/s",
            samples.len(), args.clients, wall.as_secs_f64(), errors,
            result["p50_ms"], result["p99_ms"], result["aggregate_tokens_per_s"].as_f64().unwrap_or(0.0)
        );
    }
    if errors > 0 {
        anyhow::bail!("{errors} of {} requests failed", samples.len());
    }
    Ok(())
}
