//! Chat templates rendered with minijinja, set up like Hugging Face's
//! `apply_chat_template`: `trim_blocks`, `lstrip_blocks`, loop controls, Python string
//! methods, a Python-compatible `tojson`, `raise_exception` and `strftime_now`.

use minijinja::value::{Kwargs, Value};
use minijinja::{Environment, Error, ErrorKind};
use rein_protocol::Message;

use crate::pyjson;

/// The template used for models whose GGUF carries none (ChatML).
pub const CHATML_TEMPLATE: &str = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

const NAME: &str = "chat";

/// A template that failed to compile or render.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    /// The template source does not compile.
    #[error("the chat template does not compile: {0:#}")]
    Compile(Error),
    /// Rendering failed (including the template's own `raise_exception`).
    #[error("the chat template failed to render: {0:#}")]
    Render(Error),
}

/// What a template is rendered with.
#[derive(Debug, Clone, Copy)]
pub struct RenderContext<'a> {
    /// The conversation.
    pub messages: &'a [Message],
    /// Tool definitions (`{"type": "function", "function": {...}}`), if any.
    pub tools: Option<&'a [serde_json::Value]>,
    /// End with the opening of an assistant turn.
    pub add_generation_prompt: bool,
    /// The model's BOS token text.
    pub bos_token: &'a str,
    /// The model's EOS token text.
    pub eos_token: &'a str,
}

/// A compiled chat template.
pub struct ChatTemplate {
    env: Environment<'static>,
    supports_tools: bool,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate").finish_non_exhaustive()
    }
}

impl ChatTemplate {
    /// Compiles `source`.
    pub fn new(source: &str) -> Result<Self, TemplateError> {
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_keep_trailing_newline(false);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_filter("tojson", tojson);
        env.add_function("raise_exception", raise_exception);
        env.add_function("strftime_now", strftime_now);
        env.add_template_owned(NAME, source.to_string())
            .map_err(TemplateError::Compile)?;
        Ok(Self {
            env,
            supports_tools: source.contains("tools"),
        })
    }

    /// Whether the template renders tool definitions itself (it reads `tools`); when
    /// it does not, tools are taught in the system prompt (emulated calling).
    pub fn supports_tools(&self) -> bool {
        self.supports_tools
    }

    /// Renders the prompt text.
    pub fn render(&self, ctx: &RenderContext<'_>) -> Result<String, TemplateError> {
        let template = self.env.get_template(NAME).map_err(TemplateError::Render)?;
        let tools = ctx
            .tools
            .map(Value::from_serialize)
            .unwrap_or(Value::from(()));
        template
            .render(minijinja::context! {
                messages => Value::from_serialize(ctx.messages),
                tools => tools,
                add_generation_prompt => ctx.add_generation_prompt,
                bos_token => ctx.bos_token,
                eos_token => ctx.eos_token,
            })
            .map_err(TemplateError::Render)
    }
}

/// `tojson` as Hugging Face defines it: `json.dumps(x, ensure_ascii=False, indent=indent)`.
fn tojson(value: &Value, kwargs: Kwargs) -> Result<Value, Error> {
    let indent: Option<usize> = kwargs.get("indent")?;
    kwargs.assert_all_used()?;
    let text = pyjson::dumps(value, indent)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, format!("tojson: {e}")))?;
    Ok(Value::from_safe_string(text))
}

fn raise_exception(message: String) -> Result<Value, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, message))
}

/// `strftime_now(format)`: the current UTC time, with the common `strftime` codes.
fn strftime_now(format: String) -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format_unix_time(secs, &format)
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

fn format_unix_time(secs: u64, format: &str) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let month_name = MONTHS[(month - 1) as usize];
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('d') => out.push_str(&format!("{day:02}")),
            Some('m') => out.push_str(&format!("{month:02}")),
            Some('Y') => out.push_str(&year.to_string()),
            Some('y') => out.push_str(&format!("{:02}", year % 100)),
            Some('b') => out.push_str(&month_name[..3]),
            Some('B') => out.push_str(month_name),
            Some('H') => out.push_str(&format!("{:02}", rem / 3600)),
            Some('M') => out.push_str(&format!("{:02}", rem % 3600 / 60)),
            Some('S') => out.push_str(&format!("{:02}", rem % 60)),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(source: &str, messages: &[Message]) -> Result<String, TemplateError> {
        ChatTemplate::new(source)?.render(&RenderContext {
            messages,
            tools: None,
            add_generation_prompt: true,
            bos_token: "<s>",
            eos_token: "</s>",
        })
    }

    #[test]
    fn chatml_fallback_renders() {
        let out = render(CHATML_TEMPLATE, &[Message::user("hi")]).unwrap();
        assert_eq!(
            out,
            "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
        );
    }

    #[test]
    fn raise_exception_becomes_a_render_error() {
        let err = render("{{ raise_exception('only user turns') }}", &[]).unwrap_err();
        assert!(err.to_string().contains("only user turns"), "{err}");
    }

    #[test]
    fn broken_template_is_a_compile_error() {
        assert!(matches!(
            ChatTemplate::new("{% for x in %}"),
            Err(TemplateError::Compile(_))
        ));
    }

    #[test]
    fn python_string_methods_work() {
        let out = render(
            "{{ messages[0].content.strip().upper() }}",
            &[Message::user("  hi ")],
        )
        .unwrap();
        assert_eq!(out, "HI");
    }

    #[test]
    fn dates_format_like_strftime() {
        // 2024-07-26 13:25:09 UTC
        assert_eq!(
            format_unix_time(1_722_000_309, "%d %b %Y %H:%M:%S"),
            "26 Jul 2024 13:25:09"
        );
        assert_eq!(format_unix_time(0, "%B %d, %Y %%"), "January 01, 1970 %");
    }
}
