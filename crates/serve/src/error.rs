//! Errors as OpenAI clients expect them: a status code and
//! `{"error": {"message", "type", "param", "code"}}`.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// A request the server refuses or could not answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What went wrong, for a person.
    pub message: String,
    /// The request field at fault, when there is one (`messages[2].role`).
    pub param: Option<String>,
    /// A stable machine-readable code (`context_length_exceeded`).
    pub code: Option<&'static str>,
    /// Seconds after which a retry may succeed (503 only).
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// A 400 about the request field `param`.
    pub fn invalid(param: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            param: Some(param.into()),
            code: None,
            retry_after: None,
        }
    }

    /// A 400 about the request as a whole.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            param: None,
            code: None,
            retry_after: None,
        }
    }

    /// Another status.
    pub fn with_status(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            param: None,
            code: None,
            retry_after: None,
        }
    }

    /// Adds a machine-readable code.
    pub fn code(mut self, code: &'static str) -> Self {
        self.code = Some(code);
        self
    }

    /// The OpenAI error type for the status.
    fn kind(&self) -> &'static str {
        match self.status {
            StatusCode::UNAUTHORIZED => "authentication_error",
            StatusCode::NOT_FOUND => "not_found_error",
            StatusCode::SERVICE_UNAVAILABLE | StatusCode::TOO_MANY_REQUESTS => "overloaded_error",
            s if s.is_server_error() => "server_error",
            _ => "invalid_request_error",
        }
    }

    /// The JSON body.
    pub fn body(&self) -> serde_json::Value {
        json!({"error": {
            "message": self.message,
            "type": self.kind(),
            "param": self.param,
            "code": self.code,
        }})
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, axum::Json(self.body())).into_response();
        if let Some(seconds) = self.retry_after {
            if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
        }
        response
    }
}

impl From<rein_engine::BackendError> for ApiError {
    fn from(error: rein_engine::BackendError) -> Self {
        use rein_engine::BackendError as E;
        match error {
            E::Busy(n) => Self {
                status: StatusCode::SERVICE_UNAVAILABLE,
                message: format!(
                    "all {n} sessions stayed busy for the whole queue timeout; retry later"
                ),
                param: None,
                code: Some("server_busy"),
                retry_after: Some(5),
            },
            E::PromptTooLong {
                prompt_tokens,
                limit,
            } => Self::bad_request(format!(
                "the messages take {prompt_tokens} tokens; the context holds {limit}"
            ))
            .code("context_length_exceeded"),
            E::Grammar(reason) => Self::bad_request(format!(
                "the tool or response schema could not be compiled into a grammar: {reason}"
            ))
            .code("invalid_schema"),
            E::Template(reason) => Self::bad_request(format!(
                "the model's chat template cannot render these messages: {reason}"
            )),
            other => Self::with_status(StatusCode::INTERNAL_SERVER_ERROR, other.to_string()),
        }
    }
}
