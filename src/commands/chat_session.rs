//! `rein chat` at a terminal without a prompt: a session that keeps the model loaded
//! and the conversation in its KV cache, so each turn evaluates only its new tokens.
//! Replies stream as they are written; Ctrl-C stops a reply and keeps the session;
//! slash commands (`chat_input`) change the tools, the system message or the model,
//! save and load the conversation, and show what each turn cost.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use rein_engine::{Backend, BackendError, Completion, ReplyEvent, SessionSource};
use rein_format::{ToolChoice, ToolFormat, ToolSet};
use rein_llama::{LocalBackend, LocalModel};
use rein_protocol::{Message, ToolSpec};
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::{Config, Editor};

use super::chat::{
    checked_reply, load_model, load_tools, prepare_tools, print_reply, turn_request, ChatArgs,
};
use super::chat_input::{help, parse, ChatHelper, Command, Input};
use super::chat_transcript::Conversation;

/// What a session shows before each entry.
const PROMPT: &str = ">>> ";

/// Entries kept in the history file.
const HISTORY_ENTRIES: usize = 1000;

/// Runs the interactive session until Ctrl-D or `/bye`.
/// `tools` are those of `--tools`, as written and as prepared, the choice checked
/// against them.
pub fn run(
    mut args: ChatArgs,
    tools: Option<(Vec<ToolSpec>, ToolSet)>,
    choice: ToolChoice,
    tool_format: ToolFormat,
) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let loaded = runtime.block_on(Loaded::open(&args))?;
    let mut session = ChatSession {
        loaded: Some(loaded),
        conversation: Conversation {
            system: args.system.clone(),
            ..Conversation::default()
        },
        tools: None,
        choice,
        tool_format,
        last: None,
        totals: Totals::default(),
    };
    session.offer(tools);
    let config = Config::builder()
        .auto_add_history(true)
        .max_history_size(HISTORY_ENTRIES)?
        .build();
    let mut editor: Editor<ChatHelper, DefaultHistory> = Editor::with_config(config)?;
    editor.set_helper(Some(ChatHelper));
    let history = history_file();
    if let Some(file) = &history {
        // A missing or unreadable history starts empty.
        let _ = editor.load_history(file);
    }
    println!(
        "rein chat with {}. /help lists the commands; Ctrl-D leaves.",
        args.model.model
    );
    loop {
        let line = match editor.readline(PROMPT) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => {
                println!("(Ctrl-D or /bye leaves)");
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(error) => return Err(error).context("cannot read the terminal"),
        };
        if let Some(file) = &history {
            if let Err(error) = save_history(&mut editor, file) {
                tracing::warn!("history not saved to {}: {error:#}", file.display());
            }
        }
        match parse(&line) {
            Input::Empty => {}
            Input::Message(text) => runtime.block_on(session.turn(&args, text)),
            Input::Command(Command::Bye) => break,
            Input::Command(command) => {
                if let Err(error) = runtime.block_on(session.command(&mut args, command)) {
                    println!("error: {error:#}");
                }
            }
        }
    }
    Ok(())
}

/// The history file: `rein/chat_history` in the user's data directory.
fn history_file() -> Option<PathBuf> {
    dirs::data_dir().map(|dir| dir.join("rein").join("chat_history"))
}

/// Appends the entries typed since the last save to `file`.
fn save_history(
    editor: &mut Editor<ChatHelper, DefaultHistory>,
    file: &Path,
) -> anyhow::Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    editor.append_history(file)?;
    Ok(())
}

/// A loaded model and the conversation's KV sequence on it.
struct Loaded {
    model: LocalModel,
    backend: LocalBackend,
}

impl Loaded {
    /// Resolves and loads `args`' model and opens a conversation on it.
    async fn open(args: &ChatArgs) -> anyhow::Result<Self> {
        let model = load_model(args, args.model.resolve()?).await?;
        let backend = model.session().await?;
        Ok(Self { model, backend })
    }
}

/// What one turn cost.
#[derive(Debug, Clone, Copy)]
struct TurnStats {
    prompt_tokens: usize,
    reused_tokens: usize,
    completion_tokens: usize,
    ttft: Duration,
    elapsed: Duration,
}

impl TurnStats {
    fn of(completion: &Completion) -> Self {
        Self {
            prompt_tokens: completion.prompt_tokens,
            reused_tokens: completion.reused_tokens,
            completion_tokens: completion.completion_tokens,
            ttft: completion.ttft,
            elapsed: completion.elapsed,
        }
    }

    /// Generated tokens per second after the first.
    fn tokens_per_second(&self) -> f64 {
        let generating = self.elapsed.saturating_sub(self.ttft).as_secs_f64();
        if generating > 0.0 && self.completion_tokens > 1 {
            (self.completion_tokens - 1) as f64 / generating
        } else {
            0.0
        }
    }
}

/// The session's tokens so far.
#[derive(Debug, Default)]
struct Totals {
    turns: usize,
    prompt_tokens: usize,
    reused_tokens: usize,
    completion_tokens: usize,
}

/// The state of an open session.
struct ChatSession {
    /// `None` only when `/model` could load neither the new model nor the old one.
    loaded: Option<Loaded>,
    conversation: Conversation,
    tools: Option<Arc<ToolSet>>,
    choice: ToolChoice,
    tool_format: ToolFormat,
    last: Option<TurnStats>,
    totals: Totals,
}

/// Prints reply text as it streams and keeps it (a stopped reply keeps what was shown).
struct Printer {
    stream: bool,
    text: String,
}

impl Printer {
    fn event(&mut self, event: ReplyEvent) {
        if let ReplyEvent::Content(chunk) = event {
            self.text.push_str(&chunk);
            if self.stream {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(chunk.as_bytes());
                let _ = out.flush();
            }
        }
    }
}

impl ChatSession {
    /// Sends `text` and shows the reply; an error is shown and the message taken back.
    async fn turn(&mut self, args: &ChatArgs, text: String) {
        self.conversation.messages.push(Message::user(text));
        match self.reply(args).await {
            Ok(Some(message)) => self.conversation.messages.push(message),
            Ok(None) => {}
            Err(error) => {
                self.conversation.messages.pop();
                println!("error: {error:#}");
            }
        }
    }

    /// The reply to the conversation as it stands, streamed; `None` when it was stopped
    /// before any text. The oldest exchanges give way when the conversation outgrows the
    /// context (each time said).
    async fn reply(&mut self, args: &ChatArgs) -> anyhow::Result<Option<Message>> {
        let completion = loop {
            let Some(loaded) = self.loaded.as_mut() else {
                anyhow::bail!("no model is loaded: /model NAME loads one");
            };
            let request = turn_request(
                args,
                self.conversation.request_messages(),
                self.tools.clone(),
                &self.choice,
                self.tool_format,
            );
            let mut printer = Printer {
                stream: self.tools.is_none(),
                text: String::new(),
            };
            let mut sink = |event: ReplyEvent| printer.event(event);
            let outcome = tokio::select! {
                result = loaded.backend.complete(request, &mut sink) => Some(result),
                _ = tokio::signal::ctrl_c() => None,
            };
            match outcome {
                None => {
                    println!("\n[stopped]");
                    let shown = printer.text.trim_end();
                    return Ok((!shown.is_empty()).then(|| Message::assistant(shown)));
                }
                Some(Err(BackendError::PromptTooLong { limit, .. }))
                    if self.conversation.drop_oldest_exchange() =>
                {
                    println!("(the oldest exchange was dropped: the conversation outgrew the context of {limit} tokens)");
                }
                Some(result) => break result?,
            }
        };
        let stats = TurnStats::of(&completion);
        self.last = Some(stats);
        self.totals.turns += 1;
        self.totals.prompt_tokens += stats.prompt_tokens;
        self.totals.reused_tokens += stats.reused_tokens;
        self.totals.completion_tokens += stats.completion_tokens;
        if self.tools.is_none() {
            println!();
            return Ok(Some(Message::assistant(completion.text.trim_end())));
        }
        let reply = checked_reply(&completion.reply)?;
        print_reply(&reply);
        Ok(Some(reply))
    }

    /// Offers `tools` (as written and as prepared, the tool choice checked against
    /// them), or none; the conversation keeps them as written for `/save`.
    fn offer(&mut self, tools: Option<(Vec<ToolSpec>, ToolSet)>) {
        match tools {
            Some((specs, set)) => {
                self.conversation.tools = specs;
                self.tools = Some(Arc::new(set));
            }
            None => {
                self.conversation.tools.clear();
                self.tools = None;
            }
        }
    }

    /// Carries out a slash command.
    async fn command(&mut self, args: &mut ChatArgs, command: Command) -> anyhow::Result<()> {
        match command {
            Command::Help => print!("{}", help()),
            Command::Unusable(why) => println!("{why}"),
            Command::Bye => {}
            Command::Stats => print!("{}", self.stats()),
            Command::Reset => {
                self.conversation.messages.clear();
                println!("The conversation is forgotten.");
            }
            Command::System(text) => {
                println!(
                    "{}",
                    if text.is_some() {
                        "The system message is set."
                    } else {
                        "The system message is removed."
                    }
                );
                self.conversation.system = text;
            }
            Command::Tools(None) => {
                self.offer(None);
                println!("No tools are offered.");
            }
            Command::Tools(Some(file)) => {
                let tools = load_tools(&file)?;
                tools.1.check_choice(&self.choice)?;
                self.offer(Some(tools));
                println!("{} tool(s) offered.", self.conversation.tools.len());
            }
            Command::Save(file) => {
                self.conversation.save(&file)?;
                println!(
                    "{} message(s) saved to {}.",
                    self.conversation.messages.len(),
                    file.display()
                );
            }
            Command::Load(file) => {
                let mut conversation = Conversation::load(&file)?;
                let specs = std::mem::take(&mut conversation.tools);
                let tools = if specs.is_empty() {
                    None
                } else {
                    Some(prepare_tools(specs)?)
                };
                if let Some((_, set)) = &tools {
                    set.check_choice(&self.choice)?;
                }
                println!(
                    "{} message(s) loaded from {}.",
                    conversation.messages.len(),
                    file.display()
                );
                self.conversation = conversation;
                self.offer(tools);
            }
            Command::Model(name) => {
                let previous = std::mem::replace(&mut args.model.model, name);
                self.reload(args, previous).await?;
                println!("{} is loaded; the conversation stays.", args.model.model);
            }
        }
        Ok(())
    }

    /// Loads `args`' model in place of the current one, freeing the current one first
    /// (two models may not fit in memory); when the new one cannot be loaded, `previous`
    /// is loaded again and `args` names it again.
    async fn reload(&mut self, args: &mut ChatArgs, previous: String) -> anyhow::Result<()> {
        self.loaded = None;
        self.last = None;
        let error = match Loaded::open(args).await {
            Ok(loaded) => {
                self.loaded = Some(loaded);
                return Ok(());
            }
            Err(error) => error,
        };
        args.model.model = previous;
        match Loaded::open(args).await {
            Ok(loaded) => {
                self.loaded = Some(loaded);
                Err(error.context(format!("{} stays loaded", args.model.model)))
            }
            Err(again) => Err(error.context(format!(
                "and {} could not be loaded again ({again:#}); /model NAME loads one",
                args.model.model
            ))),
        }
    }

    /// The `/stats` text.
    fn stats(&self) -> String {
        let mut text = String::new();
        match &self.last {
            Some(last) => text.push_str(&format!(
                "last turn: {} prompt tokens, {} reused from the KV cache, {} evaluated; {} generated at {:.1} tokens/s; first token after {} ms\n",
                last.prompt_tokens,
                last.reused_tokens,
                last.prompt_tokens.saturating_sub(last.reused_tokens),
                last.completion_tokens,
                last.tokens_per_second(),
                last.ttft.as_millis()
            )),
            None => text.push_str("last turn: none yet\n"),
        }
        let totals = &self.totals;
        text.push_str(&format!(
            "session: {} turn(s), {} prompt tokens ({} reused), {} generated; {} message(s) in the conversation; model {}\n",
            totals.turns,
            totals.prompt_tokens,
            totals.reused_tokens,
            totals.completion_tokens,
            self.conversation.messages.len(),
            self.loaded
                .as_ref()
                .map_or_else(|| "none".to_string(), |l| l.model.info().description)
        ));
        text
    }
}
