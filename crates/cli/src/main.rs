//! `parlance`: the command-line face of Parlance.

mod convert;
mod demo;
mod download;
mod interactive;
mod logging;
mod model;
mod options;
mod threads;
mod validate;

use std::io::Read;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// mimalloc instead of glibc's malloc: a run allocates many small, short-
/// lived values (JSON, headers, messages) across threads, and glibc's
/// malloc and free were a fifth of `parlance serve`'s CPU per run
/// (docs/performance.md, "The server on its own").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    /// Logs on stderr as `text` or `json` (one object per line); what is
    /// logged comes from RUST_LOG (default: info for serve, warn otherwise).
    #[arg(
        long,
        global = true,
        env = "PARLANCE_LOG_FORMAT",
        default_value = "text"
    )]
    log_format: String,
}

#[derive(Subcommand)]
enum Command {
    /// Check a canonical document and print path-named errors.
    ///
    /// FILE holds any document Parlance reads or writes: a conversation (a
    /// JSON array of messages, or {"messages": [...], "tools": [...]}), one
    /// message, a response envelope, a request document (what `parlance
    /// convert` writes: {"model", "stream", "messages", "tools",
    /// "options"}), a decision, a content block, a tool spec or a turn.
    /// The kind is recognised from its fields unless --kind names it. `-`
    /// reads standard input. Exit status 1 when the document is not valid
    /// (or not UTF-8), 2 when it cannot be read.
    ///
    /// Example: parlance validate examples/conversation.json
    Validate {
        /// The file to check (`-` for standard input).
        file: String,
        /// What the document is (default: recognised from its fields).
        #[arg(long, value_enum)]
        kind: Option<validate::DocKind>,
        /// Print the result as JSON (for scripts).
        #[arg(long)]
        json: bool,
        /// Also print the canonical form of the document.
        #[arg(long)]
        canonical: bool,
    },
    /// Translate conversations between the canonical format and every
    /// provider's wire format.
    #[command(after_help = CONVERT_HELP)]
    Convert {
        /// The input's format: canonical, a wire format (openai-chat, anthropic,
        /// bedrock-converse...) or a provider's dialect (deepseek, openrouter...);
        /// every name is listed below.
        #[arg(long)]
        from: String,
        /// The output's format (same names); requests only for providers.
        #[arg(long, default_value = "canonical")]
        to: String,
        /// What the input is.
        #[arg(long, value_enum, default_value = "request")]
        kind: convert::Kind,
        /// The model to name in a request built for a provider (default: the input's).
        #[arg(long)]
        model: Option<String>,
        /// Compact JSON instead of indented.
        #[arg(long)]
        compact: bool,
        /// The input file (`-` or nothing: standard input).
        #[arg(default_value = "-")]
        file: String,
    },
    /// The main job on embedded defaults: a local model (fetched on first
    /// use) calls a real tool (an order lookup); the thread is stored in SQLite.
    ///
    /// Example: parlance demo "Where is my order A-1001?"
    Demo {
        /// What to ask.
        #[arg(default_value = "Where is my order A-1001?")]
        question: String,
        /// The store for the thread (default $PARLANCE_STORE_URL, else ./parlance.db).
        #[arg(long)]
        store: Option<String>,
    },
    /// Local models: list those on this machine (Parlance's cache, Ollama,
    /// LM Studio), fetch one into the cache.
    Model {
        #[command(subcommand)]
        action: model::ModelAction,
    },
    /// Run an agent once: the answer streams to stdout, tool activity to stderr.
    ///
    /// Exit status: 0 completed, 1 failed, 3 waiting for approval.
    ///
    /// Example: parlance run --config parlance.toml "Where is order A-17?"
    Run {
        /// What to ask.
        prompt: String,
        /// The TOML configuration (providers, agents, tools).
        #[arg(long, env = "PARLANCE_CONFIG")]
        config: Option<String>,
        /// Which agent of the configuration (default: the only one).
        #[arg(long)]
        agent: Option<String>,
        /// Or a model, `provider:model` (e.g. anthropic:claude-sonnet-4-5), with no tools;
        /// given again, a fallback: the next is asked when one is rate limited or down.
        #[arg(long)]
        model: Vec<String>,
        /// Print the response envelope as JSON instead.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        flags: options::ModelFlags,
    },
    /// Talk with an agent on a stored thread; approvals are asked at the prompt.
    ///
    /// Example: parlance chat --config parlance.toml --agent support
    Chat {
        /// The TOML configuration (providers, agents, tools, store).
        #[arg(long, env = "PARLANCE_CONFIG")]
        config: Option<String>,
        /// Which agent (default: the only one).
        #[arg(long)]
        agent: Option<String>,
        /// Or a model, `provider:model`; given again, a fallback.
        #[arg(long)]
        model: Vec<String>,
        /// Continue this thread (default: a new one).
        #[arg(long)]
        thread: Option<String>,
        #[command(flatten)]
        flags: options::ModelFlags,
    },
    /// Run the HTTP API server.
    ///
    /// Example: parlance serve --config parlance.toml
    Serve {
        /// The TOML configuration (see docs/server.md); every setting can
        /// also come from the environment.
        #[arg(long)]
        config: Option<String>,
        /// Print the OpenAPI document and exit.
        #[arg(long)]
        openapi: bool,
        /// Who carries the runs: `builtin` (this server), or `temporal`
        /// (Temporal's workers, at `[temporal] address`); overrides the
        /// configuration's `executor`.
        #[arg(long, value_name = "builtin|temporal")]
        executor: Option<String>,
    },
    /// Serve the configured agents to MCP hosts over stdio.
    ///
    /// Each agent is an MCP tool (`input`, and `thread_id` to go on in a
    /// conversation); a call waiting for approval is asked as a form
    /// where the host answers forms. Standard output carries MCP only;
    /// logs go to standard error. Over HTTP, `parlance serve` answers MCP
    /// at /mcp.
    ///
    /// Example: parlance mcp serve --config parlance.toml
    Mcp {
        #[command(subcommand)]
        action: McpAction,
    },
    /// List, show or delete stored threads.
    Threads {
        #[command(subcommand)]
        action: threads::ThreadsAction,
        /// The store (`sqlite://PATH`, a path, or `postgres://...`); default
        /// $PARLANCE_STORE_URL, else ./parlance.db.
        #[arg(long, global = true)]
        store: Option<String>,
        /// Print JSON (for scripts).
        #[arg(long, global = true)]
        json: bool,
    },
    /// Print the published JSON Schema of the canonical format.
    ///
    /// Example: parlance schema message
    Schema {
        /// message, content-block, tool-spec, conversation, request,
        /// response or decision (NAME.input for what the readers accept,
        /// older shapes included: message.input...).
        #[arg(default_value = "message")]
        name: String,
        /// Write every schema file into this directory instead.
        #[arg(long)]
        out: Option<String>,
    },
}

#[derive(Subcommand)]
enum McpAction {
    /// Serve over standard input and output.
    Serve {
        /// The TOML configuration (as `parlance serve` reads it).
        #[arg(long)]
        config: Option<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let level = if matches!(cli.command, Command::Serve { .. }) {
        "info"
    } else {
        "warn"
    };
    let mut traces = match logging::init(level, &cli.log_format) {
        Ok(guard) => guard,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    let code = match run(cli.command) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    };
    traces.flush();
    code
}

fn run(command: Command) -> Result<ExitCode, String> {
    match command {
        Command::Validate {
            file,
            kind,
            json,
            canonical,
        } => Ok(match read_input(&file)? {
            Ok(text) => validate::validate(&file, &text, kind, json, canonical),
            Err(not_utf8) => {
                eprintln!("{file}: {not_utf8}");
                ExitCode::from(1)
            }
        }),
        Command::Schema { name, out } => schema(&name, out.as_deref()),
        Command::Serve {
            config,
            openapi,
            executor,
        } => {
            if openapi {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&parlance_server::openapi()).expect("json")
                );
                return Ok(ExitCode::SUCCESS);
            }
            let mut config = load_config(config.as_deref())?;
            if let Some(e) = executor {
                config.executor = e.parse().map_err(|e| format!("--executor: {e}"))?;
            }
            runtime()?
                .block_on(parlance_server::serve(config))
                .map_err(|e| e.to_string())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Mcp {
            action: McpAction::Serve { config },
        } => {
            let config = load_config(config.as_deref())?;
            runtime()?.block_on(async {
                let state = parlance_server::state::AppState::new(config)
                    .await
                    .map_err(|e| e.to_string())?;
                let state = std::sync::Arc::new(state);
                let worker = state.start_worker().map_err(|e| e.to_string())?;
                let served = parlance_server::protocols::mcp::serve_stdio(state.clone()).await;
                if let Some(w) = worker {
                    // As `serve`: tasks in hand a few seconds, then
                    // Temporal gives the rest to another worker.
                    let stopped = tokio::task::spawn_blocking(move || w.stop());
                    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), stopped).await;
                }
                state.shutdown().await;
                served
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Threads {
            action,
            store,
            json,
        } => threads::threads(action, store, json),
        Command::Demo { question, store } => {
            runtime()?.block_on(demo::demo(question, parlance_config::store_url(store)))
        }
        Command::Model { action } => model::run(action),
        Command::Run {
            prompt,
            config,
            agent,
            model,
            json,
            flags,
        } => {
            let config = load_config(config.as_deref())?;
            runtime()?.block_on(async move {
                parlance_providers::transport::install_crypto();
                let agent = interactive::agent(&config, agent.as_deref(), &model, &flags)?;
                interactive::run(agent, prompt, json, flags.verbose).await
            })
        }
        Command::Chat {
            config,
            agent,
            model,
            thread,
            flags,
        } => {
            let config = load_config(config.as_deref())?;
            runtime()?.block_on(async move {
                parlance_providers::transport::install_crypto();
                let agent = interactive::agent(&config, agent.as_deref(), &model, &flags)?;
                let url = config.store.url_or_default();
                let store = parlance_store::Store::open(url)
                    .await
                    .map_err(|e| format!("store {url}: {e}"))?;
                interactive::chat(agent, store, thread, flags.verbose).await
            })
        }
        Command::Convert {
            from,
            to,
            kind,
            model,
            compact,
            file,
        } => {
            // Bytes: a Bedrock stream may be its binary frames.
            let input = read_bytes(&file)?;
            match convert::convert(&from, &to, kind, model.as_deref(), &input) {
                Ok(c) => {
                    for w in &c.warnings {
                        eprintln!("warning: {w}");
                    }
                    let out = if compact {
                        serde_json::to_string(&c.output)
                    } else {
                        serde_json::to_string_pretty(&c.output)
                    };
                    println!("{}", out.expect("json"));
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    eprintln!("{file}: {e}");
                    Ok(ExitCode::from(1))
                }
            }
        }
    }
}

/// The input's bytes (`-`: standard input); an error is a file that
/// cannot be read (a usage error, exit 2).
fn read_bytes(file: &str) -> Result<Vec<u8>, String> {
    if file == "-" {
        let mut b = Vec::new();
        std::io::stdin()
            .read_to_end(&mut b)
            .map_err(|e| format!("reading standard input: {e}"))?;
        Ok(b)
    } else {
        std::fs::read(file).map_err(|e| format!("reading {file}: {e}"))
    }
}

/// The input's text. The outer error is a file that cannot be read (a
/// usage error, exit 2); the inner one input that is not UTF-8 (invalid
/// input, exit 1), naming the first bad byte.
fn read_input(file: &str) -> Result<Result<String, String>, String> {
    Ok(String::from_utf8(read_bytes(file)?).map_err(|e| {
        format!(
            "not UTF-8 (byte {} is not valid UTF-8)",
            e.utf8_error().valid_up_to()
        )
    }))
}

fn schema(name: &str, out: Option<&str>) -> Result<ExitCode, String> {
    if let Some(dir) = out {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {dir}: {e}"))?;
        for (file, value) in parlance_model::schema::all() {
            let path = format!("{dir}/{file}");
            let text = serde_json::to_string_pretty(&value).expect("json") + "\n";
            std::fs::write(&path, text).map_err(|e| format!("writing {path}: {e}"))?;
            println!("{path}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let file = format!("{}.schema.json", name.trim_end_matches(".schema.json"));
    match parlance_model::schema::by_name(&file) {
        Some(v) => {
            println!("{}", serde_json::to_string_pretty(&v).expect("json"));
            Ok(ExitCode::SUCCESS)
        }
        None => {
            let names: Vec<&str> = parlance_model::schema::all()
                .into_iter()
                .map(|(f, _)| f.trim_end_matches(".schema.json"))
                .collect();
            Err(format!(
                "no schema named {name:?} (expected one of: {})",
                names.join(", ")
            ))
        }
    }
}

const CONVERT_HELP: &str = "\
Formats: canonical; the wire formats openai-chat, openai-responses, anthropic,
gemini, mistral, ollama, bedrock-converse; and each provider's own dialect of
its API (what it reads and writes beyond the wire format, e.g. DeepSeek's
reasoning_content): openai, azure, azure-responses, deepseek, openrouter, groq,
together, fireworks, xai, cerebras, vllm, lmstudio, ollama-openai, bedrock.

Kinds:
  request   A request body. To canonical: the conversation, tools and options
            it carries ({\"model\", \"messages\", \"tools\", \"options\"}). From
            canonical (that same document, or a bare array of messages) to a
            provider: the request body Parlance would send, with --model or the
            document's model. Provider to provider goes through canonical and
            applies the cross-provider rules (foreign signatures and reasoning
            are dropped, ids mapped); each thing dropped is a warning on stderr.
  response  A response body, to the canonical assistant message (usage and
            finish reason included).
  stream    A recorded stream: raw SSE text (event:/data: lines), one JSON event
            per line, or a JSON array of events; assembled into the canonical
            message exactly as the streaming decoder does.

Examples:
  parlance convert --from anthropic request.json
  parlance convert --from canonical --to gemini --model gemini-2.5-flash conversation.json
  parlance convert --from openai-chat --to anthropic --model claude-sonnet-4-5 request.json
  parlance convert --from openai-responses --kind response response.json
  curl -N ... | parlance convert --from anthropic --kind stream --compact

Exit status: 0 on success, 1 when the input is not valid (the error names the
JSON path), 2 on a usage error.";

/// The configuration file (none: the environment alone).
pub(crate) fn load_config(path: Option<&str>) -> Result<parlance_config::Config, String> {
    parlance_config::Config::load(path).map_err(|e| e.to_string())
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("starting the runtime: {e}"))
}
