//! `POST /v1/chat/completions`: check the request, count its prompt, wait for a
//! session, generate (the backend prepares the turn and reads the reply), and answer
//! with one body or a stream of server-sent events. The generation runs in a task of
//! its own; a client that goes away drops what it listens on, which cancels the
//! generation and frees its session.

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
use rein_engine::{Backend, BackendError, Completion, ReplyEvent, SessionSource};
use rein_protocol::openai::{
    ChatChunk, ChatResponse, ChunkChoice, ChunkDelta, PromptTokensDetails, ResponseChoice, Usage,
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use crate::error::ApiError;
use crate::reply::{Delta, DeltaWriter, Gathered};
use crate::request::{self, Turn};
use crate::state::AppState;

/// The handler.
pub async fn completions<S: SessionSource>(
    State(state): State<Arc<AppState<S>>>,
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

/// What the generation task reports.
enum Piece {
    /// A delta of the reply.
    Delta(Delta),
    /// The end.
    Done(Box<Completion>),
    /// The generation failed.
    Failed(BackendError),
}

async fn answer<S: SessionSource>(
    state: Arc<AppState<S>>,
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
    let counted = turn.request(model.tool_format(), model.call_example(), None);
    let prompt_tokens = model.source().count_prompt(&counted).await?;
    let context = model.context_per_request() as usize;
    if prompt_tokens >= context {
        return Err(ApiError::invalid(
            "messages",
            format!(
                "the messages take {prompt_tokens} tokens; a request may use at most {context} (prompt and reply)"
            ),
        )
        .code("context_length_exceeded"));
    }
    let room = (context - prompt_tokens) as u32;
    let request = turn.request(
        model.tool_format(),
        model.call_example(),
        Some(
            turn.max_tokens
                .map_or(room, |m| m.min(room))
                .min(state.limits.max_reply_tokens.max(1)),
        ),
    );
    let mut session = {
        let _waiting = state.waiting();
        model.source().session().await?
    };
    let busy = state.busy();
    let id = state.next_id();
    let (pieces, mut receiver) = mpsc::unbounded_channel();
    let prefix = call_prefix(&id);
    tokio::spawn(async move {
        let _busy = busy;
        let mut writer = DeltaWriter::new(prefix);
        let sender = pieces.clone();
        let mut sink = move |event: ReplyEvent| {
            if let Some(delta) = writer.delta(event) {
                let _ = sender.send(Piece::Delta(delta));
            }
        };
        // The session lives in this task: when the listener goes, the generation is
        // dropped and the session freed.
        let result = tokio::select! {
            _ = pieces.closed() => return,
            result = session.complete(request, &mut sink) => result,
        };
        let _ = pieces.send(match result {
            Ok(completion) => Piece::Done(Box::new(completion)),
            Err(error) => Piece::Failed(error),
        });
    });
    tracing::debug!(%id, prompt_tokens, stream = turn.stream, "generating");
    // The first piece settles errors (a grammar that does not compile) before a
    // status is sent.
    let first = match receiver.recv().await {
        Some(Piece::Failed(error)) => return Err(error.into()),
        Some(piece) => piece,
        None => return Err(BackendError::Other("the generation stopped".into()).into()),
    };
    if turn.stream {
        Ok(stream_response(state, turn, receiver, first, id))
    } else {
        whole_response(&state, receiver, first, &id).await
    }
}

fn finish_reason(calls: usize, completion: &Completion) -> &'static str {
    if calls > 0 {
        "tool_calls"
    } else if completion.cut_off {
        "length"
    } else {
        "stop"
    }
}

fn usage(completion: &Completion) -> Usage {
    Usage {
        prompt_tokens: completion.prompt_tokens as u64,
        completion_tokens: completion.completion_tokens as u64,
        total_tokens: (completion.prompt_tokens + completion.completion_tokens) as u64,
        prompt_tokens_details: Some(PromptTokensDetails {
            cached_tokens: completion.reused_tokens as u64,
        }),
    }
}

async fn whole_response<S: SessionSource>(
    state: &AppState<S>,
    mut receiver: mpsc::UnboundedReceiver<Piece>,
    first: Piece,
    id: &str,
) -> Result<Response, ApiError> {
    let mut gathered = Gathered::default();
    let mut piece = Some(first);
    let completion = loop {
        let next = match piece.take() {
            Some(piece) => Some(piece),
            None => receiver.recv().await,
        };
        match next {
            Some(Piece::Delta(delta)) => gathered.add(&[delta]),
            Some(Piece::Done(completion)) => break completion,
            Some(Piece::Failed(error)) => return Err(error.into()),
            None => return Err(BackendError::Other("the generation stopped".into()).into()),
        }
    };
    let response = ChatResponse {
        id: id.to_string(),
        object: "chat.completion".into(),
        created: unix_time(),
        model: state.model.id().to_string(),
        system_fingerprint: Some(state.fingerprint.clone()),
        choices: vec![ResponseChoice {
            index: 0,
            message: gathered.message(),
            logprobs: None,
            finish_reason: Some(finish_reason(gathered.calls.len(), &completion).into()),
        }],
        usage: Some(usage(&completion)),
    };
    Ok(Json(response).into_response())
}

fn stream_response<S: SessionSource>(
    state: Arc<AppState<S>>,
    turn: Turn,
    receiver: mpsc::UnboundedReceiver<Piece>,
    first: Piece,
    id: String,
) -> Response {
    let (sender, events) = mpsc::channel::<Result<Event, Infallible>>(64);
    tokio::spawn(produce(state, turn, receiver, first, id, sender));
    Sse::new(ReceiverStream::new(events))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(5)))
        .into_response()
}

/// Sends the chunks of one generation until it ends or the client goes away (then
/// the receiver is dropped, which cancels the generation and frees its session).
async fn produce<S: SessionSource>(
    state: Arc<AppState<S>>,
    turn: Turn,
    mut receiver: mpsc::UnboundedReceiver<Piece>,
    first: Piece,
    id: String,
    sender: mpsc::Sender<Result<Event, Infallible>>,
) {
    let created = unix_time();
    let chunk = |delta: ChunkDelta, finish: Option<&str>| ChatChunk {
        id: id.clone(),
        object: "chat.completion.chunk".into(),
        created,
        model: state.model.id().to_string(),
        system_fingerprint: Some(state.fingerprint.clone()),
        choices: vec![ChunkChoice {
            index: 0,
            delta,
            logprobs: None,
            finish_reason: finish.map(String::from),
        }],
        usage: None,
    };
    let send = |chunk: ChatChunk| {
        let sender = sender.clone();
        async move {
            let data = serde_json::to_string(&chunk).unwrap_or_default();
            sender.send(Ok(Event::default().data(data))).await.is_ok()
        }
    };
    let opening = ChunkDelta {
        role: Some("assistant".into()),
        content: Some(String::new()),
        ..ChunkDelta::default()
    };
    if !send(chunk(opening, None)).await {
        state.cancelled();
        return;
    }
    let mut calls = 0;
    let mut piece = Some(first);
    let completion = loop {
        let next = match piece.take() {
            Some(piece) => Some(piece),
            None => tokio::select! {
                _ = sender.closed() => {
                    state.cancelled();
                    return;
                }
                next = receiver.recv() => next,
            },
        };
        match next {
            Some(Piece::Delta(delta)) => {
                calls += usize::from(matches!(delta, Delta::Call { .. }));
                if !send(chunk(delta.chunk(), None)).await {
                    state.cancelled();
                    return;
                }
            }
            Some(Piece::Done(completion)) => break completion,
            Some(Piece::Failed(error)) => {
                let error = ApiError::from(error);
                let _ = sender
                    .send(Ok(Event::default().data(error.body().to_string())))
                    .await;
                return;
            }
            None => return,
        }
    };
    let reason = finish_reason(calls, &completion);
    if !send(chunk(ChunkDelta::default(), Some(reason))).await {
        return;
    }
    if turn.include_usage {
        let mut last = chunk(ChunkDelta::default(), None);
        last.choices.clear();
        last.usage = Some(usage(&completion));
        if !send(last).await {
            return;
        }
    }
    let _ = sender.send(Ok(Event::default().data("[DONE]"))).await;
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
