//! Tests of the connector against real processes: an adopted shim is known
//! by its pid and start time, so a process that reuses the pid is not
//! taken for it (hardening review of lanes, section 8, point 2.vi).

use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use tokio::sync::mpsc;

use super::*;
use crate::lanes::cli::{Outcome, TurnParser};

#[derive(Debug)]
struct NoOutput;

impl TurnParser for NoOutput {
    fn line(&mut self, _: &str) -> Vec<flotilla_actors::lane::events::EventKind> {
        Vec::new()
    }
    fn finish(&mut self, _: Option<i32>, _: &str) -> Outcome {
        Outcome::default()
    }
}

/// Stands in for the lane: forwards that the process exited.
struct LaneProbe;

impl Actor for LaneProbe {
    type Msg = LaneMsg;
    type State = mpsc::UnboundedSender<()>;
    type Arguments = mpsc::UnboundedSender<()>;

    async fn pre_start(
        &self,
        _: ActorRef<LaneMsg>,
        tx: Self::State,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(tx)
    }

    async fn handle(
        &self,
        _: ActorRef<LaneMsg>,
        msg: LaneMsg,
        tx: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        if let LaneMsg::Exited { .. } = msg {
            let _ = tx.send(());
        }
        Ok(())
    }
}

#[tokio::test]
async fn an_adopted_pid_with_another_start_time_is_not_the_shim() {
    let dir = tempfile::tempdir().expect("tmp");
    // A live process in the shim's pid, but not the shim: its start time
    // differs from the one recorded.
    let mut other = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .expect("sleep");
    let pid = other.id();
    let start = start_time(pid).map(|s| s + 1).or(Some(1));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (lane, _) = Actor::spawn(None, LaneProbe, tx).await.expect("probe");
    let args = ConnectorArgs {
        files: TurnFiles::new(dir.path(), "w", 1),
        launch: Launch::Adopt {
            pid,
            start,
            offset: 0,
        },
        parser: Box::new(NoOutput),
        lane: lane.clone(),
    };
    let (connector, _) = Actor::spawn(None, Connector, args)
        .await
        .expect("connector");
    let exited = tokio::time::timeout(Duration::from_secs(5), rx.recv()).await;
    let _ = other.kill();
    let _ = other.wait();
    connector.stop(None);
    lane.stop(None);
    assert!(
        matches!(exited, Ok(Some(()))),
        "the adopted shim is gone: its pid now names another process"
    );
}
