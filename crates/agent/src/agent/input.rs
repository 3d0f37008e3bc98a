//! What a run starts from: new messages and earlier turns
//! ([`RunInput`]), or a paused run and decisions on it ([`Resume`]).

use parlance_format::{Decision, Message, Response, Turn};

/// What a run starts from.
#[derive(Debug, Clone, Default)]
pub struct RunInput {
    /// The new messages (usually one user message).
    pub input: Vec<Message>,
    /// Earlier turns; only their `messages` reach the model, in order.
    pub turns: Vec<Turn>,
    /// The run's id (one is made up when missing).
    pub run_id: Option<String>,
    /// The thread the run belongs to, if any.
    pub thread_id: Option<String>,
}

impl RunInput {
    /// A run from one user message.
    pub fn text(text: impl Into<String>) -> Self {
        RunInput {
            input: vec![Message::user(text)],
            ..Default::default()
        }
    }

    /// Adds earlier turns.
    pub fn with_turns(mut self, turns: Vec<Turn>) -> Self {
        self.turns = turns;
        self
    }
}

impl From<&str> for RunInput {
    fn from(text: &str) -> Self {
        RunInput::text(text)
    }
}

impl From<String> for RunInput {
    fn from(text: String) -> Self {
        RunInput::text(text)
    }
}

impl From<Message> for RunInput {
    fn from(message: Message) -> Self {
        vec![message].into()
    }
}

impl From<Vec<Message>> for RunInput {
    fn from(input: Vec<Message>) -> Self {
        RunInput {
            input,
            ..Default::default()
        }
    }
}

/// Resuming a run that waits for decisions.
#[derive(Debug, Clone)]
pub struct Resume {
    /// The turns before the paused one (as in its [`RunInput`]).
    pub turns: Vec<Turn>,
    /// The paused run's response (status `requires_approval`), as returned or stored.
    pub paused: Response,
    /// One decision per call being decided now; calls left out stay pending.
    pub decisions: Vec<Decision>,
}
