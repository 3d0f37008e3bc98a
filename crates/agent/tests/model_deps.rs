//! `current_deps`: a model of the application's sees the deps of the run
//! that calls it (how a Python model reaches its caller's event loop),
//! awaited and streamed; outside a run, or in a run without deps, none.

use std::sync::Arc;

use parlance_agent::{Agent, current_deps};
use parlance_format::{Message, RunStatus};
use parlance_model::testing::FunctionModel;

struct Caller(&'static str);

fn model() -> FunctionModel {
    FunctionModel::new(|_| {
        let who = current_deps::<Caller>().map_or("nobody", |c| c.0);
        Ok(Message::assistant(format!("called by {who}")))
    })
}

#[tokio::test]
async fn a_model_sees_the_deps_of_its_run() {
    let agent = Agent::builder(model()).build().unwrap();
    let r = agent.with_deps(Caller("ada")).run("hi").await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    assert_eq!(r.text(), "called by ada");

    let streamed = agent.with_deps(Caller("bob")).run("hi").stream();
    assert_eq!(streamed.response().await.text(), "called by bob");

    assert_eq!(agent.run("hi").await.text(), "called by nobody");
    // Deps of another type are not these.
    assert_eq!(
        agent.with_deps(Arc::new(1_u8)).run("hi").await.text(),
        "called by nobody"
    );
    assert!(current_deps::<Caller>().is_none());
}
