//! The HTTP surface: routes, the bearer-key check, the body limit, and JSON errors for
//! every refusal.

use std::future::Future;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;

use crate::error::ApiError;
use rein_engine::SessionSource;

use crate::state::AppState;

/// The routes over `state`.
pub fn router<S: SessionSource>(state: Arc<AppState<S>>) -> Router {
    let limit = state.max_body_bytes;
    let api = Router::new()
        .route(
            "/v1/chat/completions",
            post(crate::chat::completions::<S>).route_layer(middleware::from_fn_with_state(
                Arc::clone(&state),
                body_in_time::<S>,
            )),
        )
        .route("/v1/models", get(models::<S>))
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            require_key::<S>,
        ));
    Router::new()
        .merge(api)
        .route("/health", get(health::<S>))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(limit))
        .with_state(state)
}

/// Serves `router` on `listener` with the default [`crate::ServerLimits`] until
/// `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    crate::serve_with_limits(listener, router, crate::ServerLimits::default(), shutdown).await
}

/// Reads the body of a request within the body deadline, so a client that trickles it
/// cannot hold a connection and a session's worth of waiting: 408 when it is late, 413
/// when it is larger than the limit.
async fn body_in_time<S: SessionSource>(
    State(state): State<Arc<AppState<S>>>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let deadline = state.limits.body_timeout;
    let limit = state.max_body_bytes;
    match tokio::time::timeout(deadline, axum::body::to_bytes(body, limit)).await {
        Ok(Ok(bytes)) => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Ok(Err(error)) => {
            let too_large = std::error::Error::source(&error)
                .is_some_and(|e| e.is::<http_body_util::LengthLimitError>())
                || error.into_inner().is::<http_body_util::LengthLimitError>();
            if too_large {
                ApiError::with_status(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("the request body is larger than the limit of {limit} bytes"),
                )
                .into_response()
            } else {
                ApiError::with_status(
                    StatusCode::BAD_REQUEST,
                    "the request body could not be read",
                )
                .into_response()
            }
        }
        Err(_) => ApiError::with_status(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request body did not arrive within {} s",
                deadline.as_secs_f32()
            ),
        )
        .into_response(),
    }
}

async fn health<S: SessionSource>(
    State(state): State<Arc<AppState<S>>>,
) -> Json<serde_json::Value> {
    Json(state.health())
}

async fn models<S: SessionSource>(
    State(state): State<Arc<AppState<S>>>,
) -> Json<serde_json::Value> {
    Json(json!({
        "object": "list",
        "data": [{
            "id": state.model.id(),
            "object": "model",
            "created": crate::chat::unix_time(),
            "owned_by": "rein",
        }],
    }))
}

async fn not_found(request: Request) -> Response {
    ApiError::with_status(
        StatusCode::NOT_FOUND,
        format!(
            "no route {} {}; rein serves POST /v1/chat/completions, GET /v1/models and GET /health",
            request.method(),
            request.uri().path()
        ),
    )
    .into_response()
}

/// Refuses requests without the configured bearer key.
async fn require_key<S: SessionSource>(
    State(state): State<Arc<AppState<S>>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(expected) = &state.api_key else {
        return next.run(request).await;
    };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match given {
        Some(key) if same_key(key.trim(), expected) => next.run(request).await,
        Some(_) => ApiError::with_status(StatusCode::UNAUTHORIZED, "the API key is not valid")
            .code("invalid_api_key")
            .into_response(),
        None => ApiError::with_status(
            StatusCode::UNAUTHORIZED,
            "this server needs an API key: send `Authorization: Bearer KEY`",
        )
        .code("invalid_api_key")
        .into_response(),
    }
}

/// Compares keys in time that does not depend on where they differ.
fn same_key(given: &str, expected: &str) -> bool {
    let (a, b) = (given.as_bytes(), expected.as_bytes());
    let mut difference = a.len() ^ b.len();
    for (i, byte) in b.iter().enumerate() {
        difference |= usize::from(a.get(i).copied().unwrap_or(0) ^ byte);
    }
    difference == 0
}

#[cfg(test)]
mod tests {
    use super::same_key;

    #[test]
    fn keys_compare_exactly() {
        assert!(same_key("secret", "secret"));
        assert!(!same_key("secreT", "secret"));
        assert!(!same_key("secret-longer", "secret"));
        assert!(!same_key("", "secret"));
    }
}
