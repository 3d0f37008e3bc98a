//! `parlance`: the command-line face of Parlance.

use std::io::Read;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use parlance_format::{Block, Conversation, FormatError, Message, Response, Role};
use serde_json::{Value, json};

#[derive(Parser)]
#[command(
    name = "parlance",
    version,
    about = "Parlance: one conversation format, one tool engine, every model provider",
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a conversation file and print path-named errors.
    ///
    /// FILE holds a JSON array of messages, an object {"messages": [...],
    /// "tools": [...]}, one message, or a response envelope. `-` reads
    /// standard input. Exit status 1 when the file is not valid.
    ///
    /// Example: parlance validate examples/conversation.json
    Validate {
        /// The file to check (`-` for standard input).
        file: String,
        /// Print the result as JSON (for scripts).
        #[arg(long)]
        json: bool,
        /// Also print the canonical form of the document.
        #[arg(long)]
        canonical: bool,
    },
    /// Print the published JSON Schema of the canonical format.
    ///
    /// Example: parlance schema message
    Schema {
        /// message, content-block, tool-spec, response or decision.
        #[arg(default_value = "message")]
        name: String,
        /// Write every schema file into this directory instead.
        #[arg(long)]
        out: Option<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> Result<ExitCode, String> {
    match command {
        Command::Validate {
            file,
            json,
            canonical,
        } => validate(&file, json, canonical),
        Command::Schema { name, out } => schema(&name, out.as_deref()),
    }
}

fn read_input(file: &str) -> Result<String, String> {
    if file == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| format!("reading standard input: {e}"))?;
        Ok(s)
    } else {
        std::fs::read_to_string(file).map_err(|e| format!("reading {file}: {e}"))
    }
}

/// What a validated document turned out to be.
enum Document {
    Conversation(Conversation, bool),
    Message(Message),
    Response(Response),
}

fn classify(text: &str) -> Result<Document, FormatError> {
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        // Let the format crate word the syntax error.
        Err(_) => {
            return parlance_format::parse_conversation(text)
                .map(|c| Document::Conversation(c, true));
        }
    };
    if value.get("status").is_some() {
        Response::from_value(&value).map(Document::Response)
    } else if value.get("role").is_some() {
        Message::from_value(&value).map(Document::Message)
    } else {
        Conversation::from_value(&value).map(|c| Document::Conversation(c, value.is_array()))
    }
}

fn validate(file: &str, as_json: bool, canonical: bool) -> Result<ExitCode, String> {
    let text = read_input(file)?;
    match classify(&text) {
        Ok(doc) => {
            let (kind, messages, tools, canon) = match &doc {
                Document::Conversation(c, is_array) => (
                    "conversation",
                    c.messages.as_slice(),
                    c.tools.len(),
                    if *is_array {
                        parlance_format::to_json_pretty(&c.messages)
                    } else {
                        parlance_format::to_json_pretty(c)
                    },
                ),
                Document::Message(m) => (
                    "message",
                    std::slice::from_ref(m),
                    0,
                    parlance_format::to_json_pretty(m),
                ),
                Document::Response(r) => (
                    "response",
                    r.messages.as_slice(),
                    0,
                    parlance_format::to_json_pretty(r),
                ),
            };
            let calls: usize = messages.iter().map(|m| m.tool_calls().count()).sum();
            let results: usize = messages
                .iter()
                .flat_map(|m| &m.content)
                .filter(|b| matches!(b, Block::ToolResult { .. }))
                .count();
            if as_json {
                let mut out = json!({
                    "valid": true, "kind": kind, "messages": messages.len(),
                    "tool_calls": calls, "tool_results": results, "tools": tools,
                });
                if canonical {
                    out["canonical"] = serde_json::from_str(&canon).expect("we wrote it");
                }
                println!("{}", serde_json::to_string_pretty(&out).expect("json"));
            } else {
                println!(
                    "{file}: valid {kind}: {} message(s) ({}), {calls} tool call(s), {results} tool result(s), {tools} tool(s)",
                    messages.len(),
                    role_summary(messages)
                );
                if canonical {
                    println!("{canon}");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            if as_json {
                let out =
                    json!({"valid": false, "errors": [{"path": e.path, "message": e.message}]});
                println!("{}", serde_json::to_string_pretty(&out).expect("json"));
            } else {
                eprintln!("{file}: {e}");
            }
            Ok(ExitCode::from(1))
        }
    }
}

fn role_summary(messages: &[Message]) -> String {
    let mut parts = Vec::new();
    for role in [Role::System, Role::User, Role::Assistant, Role::Tool] {
        let n = messages.iter().filter(|m| m.role == role).count();
        if n > 0 {
            parts.push(format!("{n} {}", role.as_str()));
        }
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

fn schema(name: &str, out: Option<&str>) -> Result<ExitCode, String> {
    if let Some(dir) = out {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {dir}: {e}"))?;
        for (file, value) in parlance_format::schema::all() {
            let path = format!("{dir}/{file}");
            let text = serde_json::to_string_pretty(&value).expect("json") + "\n";
            std::fs::write(&path, text).map_err(|e| format!("writing {path}: {e}"))?;
            println!("{path}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let file = format!("{}.schema.json", name.trim_end_matches(".schema.json"));
    match parlance_format::schema::by_name(&file) {
        Some(v) => {
            println!("{}", serde_json::to_string_pretty(&v).expect("json"));
            Ok(ExitCode::SUCCESS)
        }
        None => Err(format!(
            "no schema named {name:?} (expected one of: message, content-block, tool-spec, response, decision)"
        )),
    }
}
