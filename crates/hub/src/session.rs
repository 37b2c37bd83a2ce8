//! One host's connection, on the hub's side: TLS has verified the
//! certificate; this reads the hello, lets the handshake decide, answers,
//! and then answers pings until the link ends.
//!
//! Owns the connection it is handed and closes it; reports to the endpoint
//! only through [`LinkEvent`]s. Must not decide anything itself: the
//! decisions are `HubHandshake`'s.

use std::net::SocketAddr;
use std::time::Duration;

use flotilla_actors::federation::{Frame, FramingError, HubHandshake, read_frame, write_frame};
use flotilla_actors::tls;
use tokio::sync::broadcast;

use crate::endpoint::LinkEvent;
use crate::transport::close;

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
    /// Where link events go.
    pub(crate) events: broadcast::Sender<LinkEvent>,
}

impl Shared {
    fn emit(&self, event: LinkEvent) {
        // Nobody listening is fine: events are for whoever cares.
        let _ = self.events.send(event);
    }
}

/// Serves one incoming connection to its end.
pub(crate) async fn serve(incoming: quinn::Incoming, shared: std::sync::Arc<Shared>) {
    let remote = incoming.remote_address();
    let connection = match incoming.await {
        Ok(connection) => connection,
        Err(e) => return fail(&shared, remote, format!("TLS handshake failed: {e}")),
    };
    let identity = match tls::peer_identity(&connection) {
        Ok(info) => info.name,
        Err(e) => {
            connection.close(close::PROTOCOL.into(), b"unreadable certificate");
            return fail(&shared, remote, e.to_string());
        }
    };
    let Some((mut send, mut recv)) = open(&shared, &connection, remote).await else {
        return;
    };
    let first = match tokio::time::timeout(HELLO_TIMEOUT, read_frame(&mut recv, shared.max_frame))
        .await
    {
        Ok(Ok(Some(frame))) => frame,
        Ok(Ok(None)) => return fail(&shared, remote, "the host closed before its hello".into()),
        Ok(Err(e)) => return protocol_error(&shared, &connection, remote, &e),
        Err(_) => return protocol_error(&shared, &connection, remote, &"no hello within 10 s"),
    };
    let version = match &first {
        Frame::Hello(hello) => hello.version.clone(),
        _ => String::new(),
    };
    match shared.handshake.on_first_frame(first, &identity) {
        Ok(ack) => {
            if let Err(e) = write_frame(&mut send, &Frame::HelloAck(ack), shared.max_frame).await {
                return fail(&shared, remote, format!("could not send the ack: {e}"));
            }
            tracing::info!(host = %identity, %remote, %version, "host link up");
            shared.emit(LinkEvent::Up {
                host: identity.clone(),
                remote,
                version,
            });
            let reason = answer_pings(&shared, &mut send, &mut recv).await;
            connection.close(close::NORMAL.into(), b"bye");
            tracing::info!(host = %identity, %reason, "host link closed");
            shared.emit(LinkEvent::Closed {
                host: identity,
                reason,
            });
        }
        Err(refusal) => {
            tracing::warn!(host = %identity, %remote, "refused: {refusal}");
            let _ = write_frame(&mut send, &refusal.to_frame(), shared.max_frame).await;
            let _ = send.finish();
            shared.emit(LinkEvent::Refused {
                identity,
                remote,
                refusal: refusal.clone(),
            });
            let _ = tokio::time::timeout(LINGER, connection.closed()).await;
            connection.close(close::REFUSED.into(), refusal.to_string().as_bytes());
        }
    }
}

/// Accepts the host's first bidirectional stream, within the hello timeout.
async fn open(
    shared: &Shared,
    connection: &quinn::Connection,
    remote: SocketAddr,
) -> Option<(quinn::SendStream, quinn::RecvStream)> {
    match tokio::time::timeout(HELLO_TIMEOUT, connection.accept_bi()).await {
        Ok(Ok(streams)) => Some(streams),
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

/// Answers pings until the host finishes its stream or the link fails;
/// returns why it ended.
async fn answer_pings(
    shared: &Shared,
    send: &mut quinn::SendStream,
    recv: &mut quinn::RecvStream,
) -> String {
    loop {
        let frame = match read_frame(recv, shared.max_frame).await {
            Ok(Some(frame)) => frame,
            Ok(None) => return "the host ended the link".to_owned(),
            Err(e) => return link_end(&e),
        };
        match frame {
            Frame::Ping { nonce } => {
                if let Err(e) = write_frame(send, &Frame::Pong { nonce }, shared.max_frame).await {
                    return link_end(&e);
                }
            }
            other => tracing::debug!(kind = other.kind(), "frame not handled yet; ignored"),
        }
    }
}

fn link_end(e: &FramingError) -> String {
    e.to_string()
}

fn fail(shared: &Shared, remote: SocketAddr, reason: String) {
    tracing::warn!(%remote, "hub link failed: {reason}");
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
