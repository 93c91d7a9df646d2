//! The async face of the engine: a cloneable handle to the model's owner thread, and
//! sessions that each own one KV sequence.

use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, OwnedSemaphorePermit, Semaphore};

use crate::worker::{self, Command};
use crate::{
    EngineConfig, EngineError, GenerateEvent, GenerateOutput, GenerateRequest, ModelInfo, TokenId,
};

/// A loaded model. Cheap to clone; the model is freed when the last clone and session
/// are dropped, and that drop returns only after the owner thread has ended (so a
/// process that exits next never tears llama.cpp down under a running decode).
#[derive(Clone)]
pub struct Engine {
    owner: Arc<Owner>,
    info: Arc<ModelInfo>,
    /// One permit per KV sequence; waiters are served first come, first served.
    slots: Arc<Semaphore>,
    queue_timeout: Duration,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

/// The owner thread and the only sender of its commands.
struct Owner {
    commands: Sender<Command>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Owner {
    fn drop(&mut self) {
        // Closing the channel ends the owner thread's loop after its current step;
        // it then frees the context and the model on its own thread.
        let (closed, _) = std::sync::mpsc::channel();
        drop(std::mem::replace(&mut self.commands, closed));
        if let Some(thread) = self.thread.take() {
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
    }
}

impl Engine {
    /// Loads the model on a new owner thread and waits until it is ready.
    pub async fn load(config: EngineConfig) -> Result<Self, EngineError> {
        let sessions = config.max_sessions.max(1);
        let queue_timeout = config.queue_timeout;
        let (commands, receiver) = std::sync::mpsc::channel();
        let (ready_tx, ready_rx) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("rein-llama".into())
            .spawn(move || worker::run(config, ready_tx, receiver))
            .map_err(|e| EngineError::Backend(format!("cannot start the engine thread: {e}")))?;
        let owner = Arc::new(Owner {
            commands,
            thread: Some(thread),
        });
        let info = ready_rx.await.map_err(|_| EngineError::EngineGone)??;
        Ok(Self {
            owner,
            info: Arc::new(info),
            slots: Arc::new(Semaphore::new(sessions as usize)),
            queue_timeout,
        })
    }

    /// Facts about the loaded model.
    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    fn send(&self, command: Command) -> Result<(), EngineError> {
        self.owner
            .commands
            .send(command)
            .map_err(|_| EngineError::EngineGone)
    }

    /// Tokenizes `text`, parsing special tokens; `add_special` adds BOS where the model wants it.
    pub async fn tokenize(
        &self,
        text: &str,
        add_special: bool,
    ) -> Result<Vec<TokenId>, EngineError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Tokenize {
            text: text.to_string(),
            literal: Vec::new(),
            add_special,
            reply,
        })?;
        rx.await.map_err(|_| EngineError::EngineGone)
    }

    /// Tokenizes a rendered prompt as a generation would: BOS where the model wants
    /// it, special tokens parsed, except in the byte ranges `literal` (text that came
    /// from content), which become plain-text tokens only, never a control token.
    pub async fn tokenize_prompt(
        &self,
        text: &str,
        literal: &[std::ops::Range<usize>],
    ) -> Result<Vec<TokenId>, EngineError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Tokenize {
            text: text.to_string(),
            literal: literal.to_vec(),
            add_special: true,
            reply,
        })?;
        rx.await.map_err(|_| EngineError::EngineGone)
    }

    /// Turns tokens back into text.
    pub async fn detokenize(&self, tokens: &[TokenId]) -> Result<String, EngineError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Detokenize {
            tokens: tokens.to_vec(),
            reply,
        })?;
        rx.await.map_err(|_| EngineError::EngineGone)?
    }

    /// Opens a session with its own KV sequence. When every sequence is taken, waits
    /// in a fair queue (first come, first served) for up to the configured queue
    /// timeout, then fails with [`EngineError::NoFreeSession`].
    pub async fn session(&self) -> Result<Session, EngineError> {
        let permit =
            tokio::time::timeout(self.queue_timeout, Arc::clone(&self.slots).acquire_owned())
                .await
                .map_err(|_| EngineError::NoFreeSession(self.max_sessions()))?
                .map_err(|_| EngineError::EngineGone)?;
        self.open(permit).await
    }

    /// Opens a session only if a sequence is free right now.
    pub async fn try_session(&self) -> Result<Session, EngineError> {
        let permit = Arc::clone(&self.slots)
            .try_acquire_owned()
            .map_err(|_| EngineError::NoFreeSession(self.max_sessions()))?;
        self.open(permit).await
    }

    /// How many sessions may exist at once.
    pub fn max_sessions(&self) -> u32 {
        self.info.max_sessions
    }

    async fn open(&self, permit: OwnedSemaphorePermit) -> Result<Session, EngineError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::OpenSession { reply })?;
        let seq = rx.await.map_err(|_| EngineError::EngineGone)??;
        Ok(Session {
            engine: self.clone(),
            seq,
            _permit: permit,
        })
    }
}

/// One conversation's KV sequence. Turns run one at a time; a turn whose prompt
/// extends the previous one only evaluates the new tokens.
#[derive(Debug)]
pub struct Session {
    engine: Engine,
    seq: i32,
    /// Held for the session's life; released after the close is sent, so the next
    /// waiter's open reaches the engine thread after this close.
    _permit: OwnedSemaphorePermit,
}

/// The events of one streaming generation: text chunks, then `Done` (or an error).
/// Dropping it cancels the generation.
pub struct GenerationStream {
    events: mpsc::UnboundedReceiver<Result<GenerateEvent, EngineError>>,
}

impl GenerationStream {
    /// The next event; `None` after `Done` or an error.
    pub async fn next(&mut self) -> Option<Result<GenerateEvent, EngineError>> {
        self.events.recv().await
    }

    /// Waits for the end, handing each text chunk to `on_text`.
    pub async fn finish(
        mut self,
        mut on_text: impl FnMut(&str),
    ) -> Result<GenerateOutput, EngineError> {
        while let Some(event) = self.next().await {
            match event? {
                GenerateEvent::Text(chunk) => on_text(&chunk),
                GenerateEvent::Done(output) => return Ok(output),
            }
        }
        Err(EngineError::EngineGone)
    }
}

impl Session {
    /// The engine this session belongs to.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Starts a generation and streams its events.
    pub fn generate_stream(
        &mut self,
        request: GenerateRequest,
    ) -> Result<GenerationStream, EngineError> {
        let (events, receiver) = mpsc::unbounded_channel();
        self.engine.send(Command::Generate {
            seq: self.seq,
            request,
            events,
        })?;
        Ok(GenerationStream { events: receiver })
    }

    /// Generates and returns the whole result.
    pub async fn generate(
        &mut self,
        request: GenerateRequest,
    ) -> Result<GenerateOutput, EngineError> {
        self.generate_stream(request)?.finish(|_| {}).await
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.engine.send(Command::CloseSession { seq: self.seq });
    }
}
