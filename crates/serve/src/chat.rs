//! `POST /v1/chat/completions`: check, render, wait for a session, generate, and answer
//! with one body or a stream of server-sent events.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use rein_llama::{
    GenerateEvent, GenerateOutput, GenerateRequest, GenerationStream, Prompt, Session, StopReason,
};
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use crate::error::ApiError;
use crate::reply::{Delta, Gathered, ReplyReader};
use crate::request::{self, Turn};
use crate::state::{AppState, BusyGuard};

/// The handler.
pub async fn completions(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    match answer(state, body).await {
        Ok(response) => response,
        Err(error) => {
            tracing::debug!(status = %error.status, "refused: {}", error.message);
            error.into_response()
        }
    }
}

/// A generation in progress and what keeps it alive.
struct Running {
    stream: GenerationStream,
    /// Dropping the session cancels the generation and frees its KV sequence.
    _session: Session,
    _busy: BusyGuard,
}

async fn answer(
    state: Arc<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body.map_err(|rejection| {
        let status = rejection.status();
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::with_status(
                status,
                format!(
                    "the request body is larger than the limit of {} bytes",
                    state.max_body_bytes
                ),
            )
        } else {
            ApiError::with_status(status, rejection.body_text())
        }
    })?;
    let turn = request::prepare(request::parse(&body)?)?;
    let model = &state.model;
    let prompt = model.render(&turn)?;
    let tokens = model.engine().tokenize(&prompt, true).await?;
    let context = model.context_per_request() as usize;
    if tokens.len() >= context {
        return Err(ApiError::invalid(
            "messages",
            format!(
                "the messages take {} tokens; a request may use at most {context} (prompt and reply)",
                tokens.len()
            ),
        )
        .code("context_length_exceeded"));
    }
    let room = (context - tokens.len()) as u32;
    let prompt_tokens = tokens.len();
    let mut generate = GenerateRequest::new(Prompt::Tokens(tokens));
    generate.sampling = turn.sampling.clone();
    generate.max_tokens = turn.max_tokens.map_or(room, |m| m.min(room));
    generate.stop = turn.stop.clone();
    generate.grammar = model.grammar(&turn);

    let mut session = {
        let _waiting = state.waiting();
        model.engine().session().await?
    };
    let busy = state.busy();
    let mut stream = session.generate_stream(generate)?;
    // The first event settles errors (a grammar that does not compile) before a
    // status is sent.
    let first = match stream.next().await {
        Some(event) => event?,
        None => return Err(rein_llama::EngineError::EngineGone.into()),
    };
    let running = Running {
        stream,
        _session: session,
        _busy: busy,
    };
    let id = state.next_id();
    tracing::debug!(%id, prompt_tokens, stream = turn.stream, "generating");
    if turn.stream {
        Ok(stream_response(state, turn, running, first, id))
    } else {
        whole_response(&state, &turn, running, first, &id).await
    }
}

fn finish_reason(calls: usize, output: &GenerateOutput) -> &'static str {
    if calls > 0 {
        "tool_calls"
    } else if matches!(
        output.stop_reason,
        StopReason::MaxTokens | StopReason::ContextFull
    ) {
        "length"
    } else {
        "stop"
    }
}

fn usage(output: &GenerateOutput) -> Value {
    json!({
        "prompt_tokens": output.prompt_tokens,
        "completion_tokens": output.tokens.len(),
        "total_tokens": output.prompt_tokens + output.tokens.len(),
        "prompt_tokens_details": {"cached_tokens": output.reused_tokens},
    })
}

fn cut_off(output: &GenerateOutput) -> bool {
    matches!(
        output.stop_reason,
        StopReason::MaxTokens | StopReason::ContextFull
    )
}

async fn whole_response(
    state: &AppState,
    turn: &Turn,
    mut running: Running,
    first: GenerateEvent,
    id: &str,
) -> Result<Response, ApiError> {
    let tools = turn.tools.as_ref().filter(|_| turn.offers_tools());
    let mut reader = ReplyReader::new(state.model.family(), tools, call_prefix(id));
    let mut gathered = Gathered::default();
    let mut event = first;
    let output = loop {
        match event {
            GenerateEvent::Text(text) => gathered.add(&reader.push(&text)),
            GenerateEvent::Done(output) => break output,
        }
        event = match running.stream.next().await {
            Some(next) => next?,
            None => return Err(rein_llama::EngineError::EngineGone.into()),
        };
    };
    gathered.add(&reader.finish(cut_off(&output)));
    let calls = gathered.calls.len();
    Ok(Json(json!({
        "id": id,
        "object": "chat.completion",
        "created": unix_time(),
        "model": state.model.id(),
        "system_fingerprint": state.fingerprint,
        "choices": [{
            "index": 0,
            "message": gathered.message(),
            "logprobs": null,
            "finish_reason": finish_reason(calls, &output),
        }],
        "usage": usage(&output),
    }))
    .into_response())
}

fn stream_response(
    state: Arc<AppState>,
    turn: Turn,
    running: Running,
    first: GenerateEvent,
    id: String,
) -> Response {
    let (sender, receiver) = mpsc::channel::<Result<Event, Infallible>>(64);
    tokio::spawn(produce(state, turn, running, first, id, sender));
    Sse::new(ReceiverStream::new(receiver))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(5)))
        .into_response()
}

/// Sends the chunks of one generation until it ends or the client goes away (then the
/// generation is cancelled and its session freed).
async fn produce(
    state: Arc<AppState>,
    turn: Turn,
    mut running: Running,
    first: GenerateEvent,
    id: String,
    sender: mpsc::Sender<Result<Event, Infallible>>,
) {
    let created = unix_time();
    let chunk = |delta: Value, finish: Option<&str>| {
        json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": state.model.id(),
            "system_fingerprint": state.fingerprint,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        })
    };
    let send = |value: Value| {
        let sender = sender.clone();
        async move {
            sender
                .send(Ok(Event::default().data(value.to_string())))
                .await
                .is_ok()
        }
    };
    let tools = turn.tools.as_ref().filter(|_| turn.offers_tools());
    let mut reader = ReplyReader::new(state.model.family(), tools, call_prefix(&id));
    if !send(chunk(json!({"role": "assistant", "content": ""}), None)).await {
        state.cancelled();
        return;
    }
    let mut event = Some(Ok(first));
    let output = loop {
        let next = match event.take() {
            Some(e) => Some(e),
            None => tokio::select! {
                _ = sender.closed() => {
                    state.cancelled();
                    return;
                }
                e = running.stream.next() => e,
            },
        };
        let deltas: Vec<Delta> = match next {
            Some(Ok(GenerateEvent::Text(text))) => reader.push(&text),
            Some(Ok(GenerateEvent::Done(output))) => break output,
            Some(Err(error)) => {
                let error = ApiError::from(error);
                let _ = send(error.body()).await;
                return;
            }
            None => return,
        };
        for delta in deltas {
            if !send(chunk(delta.to_json(), None)).await {
                state.cancelled();
                return;
            }
        }
    };
    let calls_before = reader.calls();
    let last = reader.finish(cut_off(&output));
    let calls = calls_before
        + last
            .iter()
            .filter(|d| matches!(d, Delta::Call { .. }))
            .count();
    for delta in last {
        if !send(chunk(delta.to_json(), None)).await {
            return;
        }
    }
    if !send(chunk(json!({}), Some(finish_reason(calls, &output)))).await {
        return;
    }
    if turn.include_usage {
        let mut last = chunk(json!({}), None);
        last["choices"] = json!([]);
        last["usage"] = usage(&output);
        if !send(last).await {
            return;
        }
    }
    let _ = sender.send(Ok(Event::default().data("[DONE]"))).await;
    drop(running);
}

fn call_prefix(id: &str) -> String {
    format!("call_{}", id.trim_start_matches("chatcmpl-"))
}

/// Seconds since the Unix epoch.
pub fn unix_time() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
