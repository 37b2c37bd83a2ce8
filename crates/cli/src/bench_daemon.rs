//! A benchmark's throwaway daemon and the messages it times: starting a
//! daemon (this executable, `host run`) on a throwaway home, the send each
//! benchmark makes, and sends timed one at a time until the reader has
//! them. Shared by `bench local`, `lanes`, `fleet` and `federation`; the
//! figures themselves are each benchmark's.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use flotilla_actors::names::{MessageId, PeerName};
use flotilla_actors::protocol::{HostStatusArgs, InboxAckArgs, InboxFetchArgs, SendArgs};
use flotilla_host::client::ControlClient;
use flotilla_host::home::Home;

/// Where a throwaway daemon's log goes: nowhere, or this process's stderr
/// when `FLOTILLA_LOG` is set (`flotilla_stage=debug` traces each stage of
/// every message; `docs/benchmarks.md`).
pub(crate) fn daemon_stderr() -> std::process::Stdio {
    if std::env::var_os("FLOTILLA_LOG").is_some() {
        std::process::Stdio::inherit()
    } else {
        std::process::Stdio::null()
    }
}

/// Starts a throwaway daemon (this executable, `host run`) on `home` and
/// connects to it; returns the process, a client and the daemon's pid.
pub(crate) async fn start_daemon(
    home: &Home,
) -> Result<(tokio::process::Child, ControlClient, u32)> {
    let daemon = tokio::process::Command::new(std::env::current_exe()?)
        .arg("--home")
        .arg(home.root.as_deref().context("home")?)
        .args(["host", "run", "--name", "bench"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(daemon_stderr())
        .kill_on_drop(true)
        .spawn()?;
    let mut client = ControlClient::connect_patiently(home, Duration::from_secs(20)).await?;
    let pid = client.call(&HostStatusArgs {}).await?.pid;
    Ok((daemon, client, pid))
}

pub(crate) fn send_args(from: &str, to: &str, i: usize) -> Result<SendArgs> {
    Ok(SendArgs {
        as_peer: PeerName::new(from)?,
        to: vec![to.to_owned()],
        summary: None,
        body: format!("benchmark message {i} from {from}"),
        id: Some(MessageId::generate()),
    })
}

/// The times of [`timed_sends`], each sorted.
pub(crate) struct SendTimes {
    /// From the send call until the reader's inbox read returned it.
    pub(crate) inbox: Vec<Duration>,
    /// From the send call until the sender was answered.
    pub(crate) answered: Vec<Duration>,
}

/// Sends `n` messages one at a time from `from` (a peer of `sender`) to
/// `to`, each timed from the send call until `reader_peer`'s waiting inbox
/// read on `reader` returns it (then acknowledged), and until the sender is
/// answered; the next is sent once both are done.
pub(crate) async fn timed_sends(
    sender: &Home,
    from: &str,
    reader: &Home,
    reader_peer: &str,
    to: &str,
    n: usize,
) -> Result<SendTimes> {
    let mut sending = ControlClient::connect(sender).await?;
    let mut reading = ControlClient::connect(reader).await?;
    let reader_name = PeerName::new(reader_peer)?;
    let mut times = SendTimes {
        inbox: Vec::with_capacity(n),
        answered: Vec::with_capacity(n),
    };
    for i in 0..n {
        let fetch = InboxFetchArgs {
            as_peer: reader_name.clone(),
            wait_ms: 10_000,
            limit: Some(10),
        };
        let pending = tokio::spawn(async move {
            let got = reading.call(&fetch).await;
            (reading, got, Instant::now())
        });
        let start = Instant::now();
        sending.call(&send_args(from, to, i)?).await?;
        times.answered.push(start.elapsed());
        let (r, got, read_at) = pending.await?;
        reading = r;
        let got = got?;
        times.inbox.push(read_at.saturating_duration_since(start));
        if got.messages.is_empty() {
            anyhow::bail!("message {i} did not reach {to} within 10 s");
        }
        let ids = got.messages.iter().map(|m| m.id.clone()).collect();
        reading
            .call(&InboxAckArgs {
                as_peer: reader_name.clone(),
                ids,
            })
            .await?;
    }
    times.inbox.sort();
    times.answered.sort();
    Ok(times)
}
