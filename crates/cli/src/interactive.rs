//! `parlance run` and `parlance chat`: an agent in the terminal.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;
use parlance_agent::{Agent, RunEvent};
use parlance_config::{AgentConfig, AgentModel, Config};
use parlance_format::{Block, Decision, DecisionKind, Message, Response, RunStatus};
use parlance_providers::HttpConfig;
use parlance_providers::transport::SharedClient;
use parlance_runtime::ThreadRunner;
use parlance_store::Store;

use crate::options::{ModelFlags, report};

/// The agent to use: `--model`, else `--agent` or the configuration's only
/// agent; the command line's sampling flags over its own.
pub fn agent(
    config: &Config,
    name: Option<&str>,
    models: &[String],
    flags: &ModelFlags,
) -> Result<Agent, String> {
    let http = SharedClient::new(&HttpConfig::default());
    if !models.is_empty() {
        let model = match models {
            [one] => AgentModel::One(one.clone()),
            many => AgentModel::List(many.to_vec()),
        };
        let mut cfg = AgentConfig {
            model,
            ..AgentConfig::default()
        };
        flags.apply(&mut cfg);
        return parlance_assemble::agent(config, None, &cfg, &http).map_err(|e| e.to_string());
    }
    let name = match name {
        Some(n) => n.to_string(),
        None if config.agents.len() == 1 => config.agents.keys().next().expect("one").clone(),
        None => {
            return Err(
                "name an agent with --agent, or a model with --model provider:model".into(),
            );
        }
    };
    let mut cfg = config
        .agents
        .get(&name)
        .ok_or_else(|| format!("--agent: no agent named {name:?} in the configuration"))?
        .clone();
    flags.apply(&mut cfg);
    parlance_assemble::agent(config, Some(&name), &cfg, &http).map_err(|e| e.to_string())
}

/// A spinner on stderr until the first output (only on a terminal).
struct Spinner(Arc<AtomicBool>);

impl Spinner {
    fn start() -> Spinner {
        let stop = Arc::new(AtomicBool::new(false));
        if std::io::stderr().is_terminal() {
            let s = stop.clone();
            tokio::spawn(async move {
                let frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
                let mut i = 0;
                while !s.load(Ordering::Relaxed) {
                    eprint!("\r{} thinking…", frames[i % frames.len()]);
                    i += 1;
                    tokio::time::sleep(std::time::Duration::from_millis(90)).await;
                }
                eprint!("\r            \r");
            });
        }
        Spinner(stop)
    }

    fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// `parlance run PROMPT`: streams the answer to stdout and tool activity to stderr.
pub async fn run(
    agent: Agent,
    prompt: String,
    json: bool,
    verbose: bool,
) -> Result<ExitCode, String> {
    let mut events = agent.run(prompt).stream();
    let spinner = Spinner::start();
    let mut out = std::io::stdout();
    let mut response = None;
    let mut since = std::time::Instant::now();
    // Whether the answer being written came as text deltas (a reply under
    // a grammar or schema comes whole).
    let mut streamed = false;
    while let Some(e) = events.next().await {
        spinner.stop();
        if let RunEvent::MessageCompleted(m) = &e
            && m.role == parlance_format::Role::Assistant
        {
            if !json && m.tool_calls().next().is_none() {
                if streamed {
                    println!();
                } else {
                    println!("{}", m.text());
                }
            }
            streamed = false;
            report(m, verbose, Some(since.elapsed()));
        }
        if matches!(e, RunEvent::ToolCallFinished { .. }) {
            since = std::time::Instant::now();
        }
        if matches!(e, RunEvent::TextDelta(_)) {
            streamed = true;
        }
        match e {
            RunEvent::TextDelta(t) if !json => {
                let _ = write!(out, "{t}");
                let _ = out.flush();
            }
            RunEvent::ToolCallStarted { name, .. } if !json => eprintln!("\n  → {name}"),
            RunEvent::ToolCallFinished {
                name,
                status,
                elapsed,
                ..
            } if !json => {
                eprintln!(
                    "  ← {name} {} ({} ms)",
                    status.as_str(),
                    elapsed.as_millis()
                )
            }
            RunEvent::MessageCompleted(m) if !json => {
                for c in m.tool_calls() {
                    eprintln!("  call {} {}", c.name, c.arguments);
                }
            }
            RunEvent::RunCompleted(r) => response = Some(r),
            _ => {}
        }
    }
    spinner.stop();
    let r = response.ok_or("the run ended without a response")?;
    if json {
        println!("{}", parlance_format::to_json_pretty(&r));
    }
    Ok(exit_for(&r, json))
}

fn exit_for(r: &Response, json: bool) -> ExitCode {
    match r.status {
        RunStatus::Completed => ExitCode::SUCCESS,
        RunStatus::RequiresApproval => {
            if !json {
                for p in &r.pending {
                    eprintln!(
                        "waiting for approval: {} {} (use parlance chat to decide)",
                        p.name, p.arguments
                    );
                }
            }
            ExitCode::from(3)
        }
        RunStatus::Failed => {
            if !json && let Some(e) = &r.error {
                eprintln!("error: {}: {}", e.code, e.message);
            }
            ExitCode::from(1)
        }
    }
}

fn ask(prompt: &str, input: &mut impl BufRead) -> Option<String> {
    eprint!("{prompt}");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_string()),
    }
}

/// `parlance chat`: a conversation on a thread; approvals asked at the prompt.
pub async fn chat(
    agent: Agent,
    store: Store,
    thread: Option<String>,
    verbose: bool,
) -> Result<ExitCode, String> {
    let thread = match thread {
        Some(t) => t,
        None => {
            store
                .create_thread(None, serde_json::json!({"via": "parlance chat"}))
                .await
                .map_err(|e| e.to_string())?
                .id
        }
    };
    eprintln!("thread {thread} (empty line or end of input to leave)");
    let runner = ThreadRunner::new(store, agent);
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    while let Some(line) = ask("> ", &mut input) {
        if line.is_empty() {
            break;
        }
        let started = std::time::Instant::now();
        let mut r = runner
            .run(&thread, vec![Message::user(line)])
            .await
            .map_err(|e| e.to_string())?;
        report_all(&r, verbose, started.elapsed());
        while r.status == RunStatus::RequiresApproval {
            let mut decisions = Vec::new();
            for p in &r.pending {
                let choice = ask(
                    &format!(
                        "{} {} — [a]pprove, [r]eject, [e]dit, a[n]swer? ",
                        p.name, p.arguments
                    ),
                    &mut input,
                )
                .unwrap_or_default();
                let mut d = Decision {
                    tool_call_id: p.tool_call_id.clone(),
                    digest: p.digest.clone(),
                    decision: DecisionKind::Approved,
                    arguments: None,
                    reason: None,
                    content: None,
                };
                match choice.chars().next() {
                    Some('r') => {
                        d.decision = DecisionKind::Rejected;
                        d.reason = ask("why? ", &mut input).filter(|s| !s.is_empty());
                    }
                    Some('e') => {
                        let text = ask("arguments (JSON): ", &mut input).unwrap_or_default();
                        d.decision = DecisionKind::Edited;
                        d.arguments = Some(
                            serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}"))?,
                        );
                    }
                    Some('n') => {
                        d.decision = DecisionKind::Answered;
                        d.content = Some(vec![Block::text(
                            ask("answer: ", &mut input).unwrap_or_default(),
                        )]);
                    }
                    _ => {}
                }
                decisions.push(d);
            }
            let run_id = r.id.clone().unwrap_or_default();
            let started = std::time::Instant::now();
            r = match runner.resume(&run_id, decisions).await {
                Ok(r) => {
                    report_all(&r, verbose, started.elapsed());
                    r
                }
                Err(e) => {
                    eprintln!("refused: {e}");
                    continue;
                }
            };
        }
        match r.status {
            RunStatus::Completed => println!(
                "{}",
                r.output
                    .as_str()
                    .map_or_else(|| r.output.to_string(), str::to_string)
            ),
            _ => eprintln!("error: {}", r.error.map(|e| e.message).unwrap_or_default()),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Warnings and costs of a run's model calls (one call: the time it took;
/// several: no per-call time is known here).
fn report_all(r: &Response, verbose: bool, elapsed: std::time::Duration) {
    let answers: Vec<&Message> = r
        .messages
        .iter()
        .filter(|m| m.role == parlance_format::Role::Assistant)
        .collect();
    let wall = (answers.len() == 1).then_some(elapsed);
    for m in answers {
        report(m, verbose, wall);
    }
}
