//! One host's connection, on the hub's side: TLS has verified the
//! certificate; this reads the hello, lets the handshake decide, answers,
//! and then answers pings until the link ends.
//!
//! Owns the connection it is handed and closes it; reports to the endpoint
//! only through [`LinkEvent`]s. Must not decide anything itself: the
//! decisions are `HubHandshake`'s.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use flotilla_actors::federation::{
    Frame, HubHandshake, Refusal, read_frame, read_sized, write_frame,
};
use std::sync::atomic::{AtomicU64, Ordering};

use flotilla_actors::model::Timestamp;
use flotilla_actors::names::HostName;
use flotilla_actors::tls;
use tokio::sync::broadcast;

use crate::attempts::{Attempt, AttemptLimiter};
use crate::budget::{BudgetEvent, BudgetLimits};
use crate::budget_pace::BudgetPace;
use crate::core::{CoreMsg, CoreRef, LinkHandle};
use crate::endpoint::LinkEvent;
use crate::outbound::{Outbound, OutboundError, outbound};
use crate::transport::close;

/// Failed links logged per source address and minute.
pub(crate) const FAILURES_LOGGED: u32 = 5;

/// How long a host has, once connected, to send its hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the hub waits, after a refusal, for the host to read it and
/// close before closing itself (closing at once could drop the refusal).
const LINGER: Duration = Duration::from_secs(2);

/// What every session shares.
#[derive(Debug)]
pub(crate) struct Shared {
    /// The hub's decisions.
    pub(crate) handshake: HubHandshake,
    /// The largest frame accepted.
    pub(crate) max_frame: usize,
    /// The most bytes queued for one host before its link is closed.
    pub(crate) link_queue_bytes: usize,
    /// What one host may send.
    pub(crate) budget: BudgetLimits,
    /// Failed links logged per source address and minute.
    pub(crate) failures: std::sync::Mutex<AttemptLimiter>,
    /// Where link events go.
    pub(crate) events: broadcast::Sender<LinkEvent>,
    /// The owner of the roster and queues; without one, links only answer
    /// pings.
    pub(crate) core: Option<CoreRef>,
    /// Numbers links, so that a host's old link is told from its new one.
    pub(crate) next_link: AtomicU64,
    /// Accepted links by host, so revocation can close them.
    pub(crate) live: std::sync::Arc<crate::live::LiveLinks>,
}

impl Shared {
    fn emit(&self, event: LinkEvent) {
        // Nobody listening is fine: events are for whoever cares.
        let _ = self.events.send(event);
    }
}

/// The hub's half of the control stream (the host's first bidirectional
/// stream), which carries the handshake and then pings.
struct Control {
    /// Hub to host: ack or refusal, pongs.
    send: quinn::SendStream,
    /// Host to hub: hello, pings.
    recv: quinn::RecvStream,
}

/// Serves one incoming connection to its end.
pub(crate) async fn serve(incoming: quinn::Incoming, shared: std::sync::Arc<Shared>) {
    let remote = incoming.remote_address();
    let Some((connection, identity)) = authenticate(&shared, incoming).await else {
        return;
    };
    let Some(mut control) = open(&shared, &connection, remote).await else {
        return;
    };
    let Some(first) = read_hello(&shared, &connection, &mut control, remote).await else {
        return;
    };
    let version = match &first {
        Frame::Hello(hello) => hello.version.clone(),
        _ => String::new(),
    };
    match shared.handshake.on_first_frame(first, &identity) {
        Ok(ack) => {
            let link = Link {
                shared: &shared,
                connection,
                identity,
                remote,
            };
            link.run(Frame::HelloAck(ack), version, control).await;
        }
        Err(refusal) => refuse(&shared, connection, control, identity, remote, refusal).await,
    }
}

/// Completes the QUIC and TLS handshake; the peer's identity is the name in
/// its verified certificate.
async fn authenticate(
    shared: &Shared,
    incoming: quinn::Incoming,
) -> Option<(quinn::Connection, String)> {
    let remote = incoming.remote_address();
    let connection = match incoming.await {
        Ok(connection) => connection,
        Err(e) => {
            fail(shared, remote, format!("TLS handshake failed: {e}"));
            return None;
        }
    };
    match tls::peer_identity(&connection) {
        Ok(info) => Some((connection, info.name)),
        Err(e) => {
            protocol_error(shared, &connection, remote, &e);
            None
        }
    }
}

/// Reads the first frame, within the hello timeout.
async fn read_hello(
    shared: &Shared,
    connection: &quinn::Connection,
    control: &mut Control,
    remote: SocketAddr,
) -> Option<Frame> {
    let read = read_frame(&mut control.recv, shared.max_frame);
    match tokio::time::timeout(HELLO_TIMEOUT, read).await {
        Ok(Ok(Some(frame))) => Some(frame),
        Ok(Ok(None)) => {
            fail(shared, remote, "the host closed before its hello".into());
            None
        }
        Ok(Err(e)) => {
            protocol_error(shared, connection, remote, &e);
            None
        }
        Err(_) => {
            protocol_error(shared, connection, remote, &"no hello within 10 s");
            None
        }
    }
}

/// Sends the refusal, lets the host read it, then closes.
async fn refuse(
    shared: &Shared,
    connection: quinn::Connection,
    mut control: Control,
    identity: String,
    remote: SocketAddr,
    refusal: Refusal,
) {
    tracing::warn!(host = %identity, %remote, "refused: {refusal}");
    let _ = write_frame(&mut control.send, &refusal.to_frame(), shared.max_frame).await;
    let _ = control.send.finish();
    let reason = refusal.to_string();
    shared.emit(LinkEvent::Refused {
        identity,
        remote,
        refusal,
    });
    let _ = tokio::time::timeout(LINGER, connection.closed()).await;
    connection.close(close::REFUSED.into(), reason.as_bytes());
}

/// An accepted host's link.
struct Link<'a> {
    /// Limits and where events go.
    shared: &'a Shared,
    /// Closed when the link ends.
    connection: quinn::Connection,
    /// The host's name, from its certificate.
    identity: String,
    /// For logs and events.
    remote: SocketAddr,
}

impl Link<'_> {
    /// Acks the hello, answers pings until the link ends, and reports.
    async fn run(self, ack: Frame, version: String, mut control: Control) {
        let Self {
            shared,
            connection,
            identity,
            remote,
        } = self;
        if let Err(e) = write_frame(&mut control.send, &ack, shared.max_frame).await {
            return fail(shared, remote, format!("could not send the ack: {e}"));
        }
        tracing::info!(host = %identity, %remote, %version, "host link up");
        shared.emit(LinkEvent::Up {
            host: identity.clone(),
            remote,
            version: version.clone(),
        });
        shared.live.register(&identity, &connection);
        let (tx, writer) = outbound(
            connection.clone(),
            shared.link_queue_bytes,
            shared.max_frame,
        );
        let Control { send, mut recv } = control;
        let writer = tokio::spawn(writer.run(send));
        let core = shared.core.clone().zip(HostName::new(&identity).ok());
        let link_id = shared.next_link.fetch_add(1, Ordering::Relaxed);
        if let Some((core, host)) = &core {
            let link = LinkHandle {
                id: link_id,
                tx: tx.clone(),
                connection: connection.clone(),
                remote,
                since: Timestamp::now(),
            };
            let _ = core.send_message(CoreMsg::LinkUp {
                host: host.clone(),
                version,
                link,
            });
        }
        let link = LinkReader {
            shared,
            connection: &connection,
            tx: &tx,
            core: core.as_ref(),
            link_id,
        };
        let reason = link.read_frames(&mut recv).await;
        if let Some((core, host)) = &core {
            let _ = core.send_message(CoreMsg::LinkDown {
                host: host.clone(),
                link_id,
            });
        }
        drop(tx);
        writer.abort();
        shared.live.unregister(&identity, &connection);
        connection.close(close::NORMAL.into(), b"bye");
        tracing::info!(host = %identity, %reason, "host link closed");
        shared.emit(LinkEvent::Closed {
            host: identity,
            reason,
        });
    }
}

/// Accepts the host's first bidirectional stream, within the hello timeout.
async fn open(
    shared: &Shared,
    connection: &quinn::Connection,
    remote: SocketAddr,
) -> Option<Control> {
    match tokio::time::timeout(HELLO_TIMEOUT, connection.accept_bi()).await {
        Ok(Ok((send, recv))) => Some(Control { send, recv }),
        Ok(Err(e)) => {
            fail(
                shared,
                remote,
                format!("the link ended before its hello: {e}"),
            );
            None
        }
        Err(_) => {
            protocol_error(shared, connection, remote, &"no stream within 10 s");
            None
        }
    }
}

/// What reading one link's frames needs.
struct LinkReader<'a> {
    shared: &'a Shared,
    connection: &'a quinn::Connection,
    tx: &'a Outbound,
    core: Option<&'a (CoreRef, HostName)>,
    link_id: u64,
}

impl LinkReader<'_> {
    /// Reads the host's frames until it finishes its stream or the link
    /// fails: charges each to the host's budget, answers pings itself and
    /// hands everything else to the core. Returns why the link ended.
    async fn read_frames(&self, recv: &mut quinn::RecvStream) -> String {
        let mut budget = BudgetPace::new(self.shared.budget);
        loop {
            let (frame, size) = match read_sized(recv, self.shared.max_frame).await {
                Ok(Some(read)) => read,
                Ok(None) => return "the host ended the link".to_owned(),
                Err(e) => return e.to_string(),
            };
            if let Some(reason) = budget.pace(size, |e| self.report(e)).await {
                self.connection
                    .close(close::OVER_BUDGET.into(), reason.as_bytes());
                return reason;
            }
            flotilla_actors::federation::stage::frame("hub.received", &frame);
            match (frame, self.core) {
                (Frame::Ping { nonce }, _) => {
                    if let Err(e @ OutboundError::NotReading { .. }) =
                        self.tx.send(&Frame::Pong { nonce })
                    {
                        return e.to_string();
                    }
                }
                (frame, Some((core, host))) => {
                    let msg = CoreMsg::Frame {
                        host: host.clone(),
                        link_id: self.link_id,
                        frame,
                    };
                    if core.send_message(msg).is_err() {
                        return "the hub is stopping".to_owned();
                    }
                }
                (other, None) => {
                    tracing::debug!(kind = other.kind(), "no hub core; frame ignored")
                }
            }
        }
    }

    fn report(&self, event: BudgetEvent) {
        if let BudgetEvent::Cut(reason) = &event {
            tracing::warn!(link = self.link_id, "host cut: {reason}");
        }
        if let Some((core, host)) = self.core {
            let _ = core.send_message(CoreMsg::Budget {
                host: host.clone(),
                event,
            });
        }
    }
}

/// Reports a link that failed before or while it was set up. The log says
/// so at most [`FAILURES_LOGGED`] times per source address and minute (a
/// flood of bad handshakes must not grow the log); the event always goes
/// out.
fn fail(shared: &Shared, remote: SocketAddr, reason: String) {
    let verdict = shared
        .failures
        .lock()
        .map(|mut l| l.attempt(remote.ip(), Instant::now()))
        .unwrap_or(Attempt::Admitted);
    match verdict {
        Attempt::Admitted => tracing::warn!(%remote, "hub link failed: {reason}"),
        Attempt::FirstRefused => tracing::warn!(
            %remote,
            "hub link failed: {reason} (more failures from this address this minute are not logged)"
        ),
        Attempt::Refused => tracing::debug!(%remote, "hub link failed: {reason}"),
    }
    shared.emit(LinkEvent::Failed { remote, reason });
}

fn protocol_error(
    shared: &Shared,
    connection: &quinn::Connection,
    remote: SocketAddr,
    error: &dyn std::fmt::Display,
) {
    connection.close(close::PROTOCOL.into(), error.to_string().as_bytes());
    fail(shared, remote, error.to_string());
}
