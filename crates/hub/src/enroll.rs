//! The hub's enrollment listener: a separate QUIC port (ALPN
//! `flotilla-enroll/1`) where a host with a token, and no certificate yet,
//! asks for one, and where an enrolled host renews with its current
//! certificate. The main port keeps requiring a client certificate.
//!
//! Owns this listener's accept loop and the one-request-one-reply exchange
//! on each connection, with its timeouts and size limit. The decisions are
//! [`EnrollAuthority`]'s (and, below it, `flotilla_actors::federation::enroll`);
//! the host's side is [`client`]. Must not touch the main port's sessions.

mod authority;
pub mod client;
pub mod probe;

use std::future::Future;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use flotilla_actors::federation::enroll::{
    EnrollFrame, EnrollRefusalCode, EnrollReply, MAX_ENROLL_FRAME, refused,
};
use flotilla_actors::federation::{read_message, write_message};
use flotilla_actors::tls;
use tokio::task::JoinSet;

pub use authority::EnrollAuthority;

use crate::attempts::{Attempt, AttemptLimiter};
use crate::endpoint::BindError;
use crate::transport::close;

/// How long a client has to send its request once connected.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the hub waits for the client to read the reply and close.
const LINGER: Duration = Duration::from_secs(2);

/// Enrollment attempts one source address may make per minute by default.
pub const ATTEMPTS_PER_MINUTE: u32 = 30;

/// The enrollment listener, bound and ready to [`run`](Self::run).
#[derive(Debug)]
pub struct EnrollServer {
    /// The quinn endpoint on the enrollment socket.
    endpoint: quinn::Endpoint,
    /// Decides and signs.
    authority: Arc<EnrollAuthority>,
    /// Attempts per source address.
    attempts: AttemptLimiter,
}

impl EnrollServer {
    /// Binds `addr` and serves `server_config` (build it with
    /// [`crate::setup::enroll_server_config`]).
    pub fn bind(
        addr: SocketAddr,
        server_config: quinn::ServerConfig,
        authority: EnrollAuthority,
    ) -> Result<Self, BindError> {
        let socket = UdpSocket::bind(addr).map_err(|source| BindError::Socket {
            addr: addr.to_string(),
            source,
        })?;
        let endpoint = quinn::Endpoint::new(
            quinn::EndpointConfig::default(),
            Some(server_config),
            socket,
            Arc::new(quinn::TokioRuntime),
        )
        .map_err(|source| BindError::Socket {
            addr: addr.to_string(),
            source,
        })?;
        Ok(Self {
            endpoint,
            authority: Arc::new(authority),
            attempts: AttemptLimiter::new(ATTEMPTS_PER_MINUTE, Duration::from_secs(60)),
        })
    }

    /// At most `limit` attempts per source address in each `window`.
    pub fn with_attempt_limit(mut self, limit: u32, window: Duration) -> Self {
        self.attempts = AttemptLimiter::new(limit, window);
        self
    }

    /// The address hosts enroll at.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.endpoint.local_addr()
    }

    /// Answers requests until `shutdown` resolves. An address over its
    /// attempt limit is refused before any handshake, with one warning per
    /// window.
    pub async fn run(mut self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        let mut requests = JoinSet::new();
        loop {
            tokio::select! {
                () = &mut shutdown => break,
                incoming = self.endpoint.accept() => match incoming {
                    Some(incoming) => {
                        let remote = incoming.remote_address();
                        match self.attempts.attempt(remote.ip(), Instant::now()) {
                            Attempt::Admitted => {
                                requests.spawn(serve(incoming, self.authority.clone()));
                            }
                            Attempt::FirstRefused => {
                                tracing::warn!(%remote, "too many enrollment attempts from this address; refusing it for the rest of the minute");
                                incoming.refuse();
                            }
                            Attempt::Refused => incoming.refuse(),
                        }
                    }
                    None => break,
                },
                Some(_) = requests.join_next(), if !requests.is_empty() => {}
            }
        }
        self.endpoint
            .close(close::SHUTDOWN.into(), b"the hub is shutting down");
        requests.abort_all();
    }
}

/// One connection: one request, one reply.
async fn serve(incoming: quinn::Incoming, authority: Arc<EnrollAuthority>) {
    let remote = incoming.remote_address();
    let connection = match incoming.await {
        Ok(connection) => connection,
        Err(e) => {
            tracing::warn!(%remote, "enrollment TLS handshake failed: {e}");
            return;
        }
    };
    let certified = tls::peer_identity(&connection).ok().map(|info| info.name);
    let exchange = async {
        let (mut send, mut recv) = connection.accept_bi().await.ok()?;
        let request = read_message::<EnrollFrame, _>(&mut recv, MAX_ENROLL_FRAME)
            .await
            .ok()??;
        let reply = answer(&authority, request, certified).await;
        let frame = EnrollFrame::EnrollReply(reply);
        write_message(&mut send, &frame, MAX_ENROLL_FRAME)
            .await
            .ok()?;
        send.finish().ok()
    };
    if tokio::time::timeout(REQUEST_TIMEOUT, exchange)
        .await
        .ok()
        .flatten()
        .is_none()
    {
        tracing::warn!(%remote, "enrollment request incomplete or malformed");
        connection.close(close::PROTOCOL.into(), b"bad enrollment request");
        return;
    }
    let _ = tokio::time::timeout(LINGER, connection.closed()).await;
    connection.close(close::NORMAL.into(), b"bye");
}

/// The reply to one request. Signing reads files, so it runs off the
/// async threads.
async fn answer(
    authority: &Arc<EnrollAuthority>,
    request: EnrollFrame,
    certified: Option<String>,
) -> EnrollReply {
    let authority = authority.clone();
    let work = move || {
        let now = SystemTime::now();
        match (request, certified) {
            (EnrollFrame::EnrollRequest(r), _) => authority.enroll(&r, now),
            (EnrollFrame::RenewRequest(r), Some(name)) => authority.renew(&name, &r.csr_pem, now),
            (EnrollFrame::RenewRequest(_), None) => refused(
                EnrollRefusalCode::NotAuthenticated,
                "a renewal must come with the host's current certificate; enroll again with a token",
            ),
            (EnrollFrame::EnrollReply(_), _) => refused(
                EnrollRefusalCode::BadRequest,
                "expected an enrollment or renewal request",
            ),
        }
    };
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        refused(
            EnrollRefusalCode::Internal,
            format!("the hub failed while answering: {e}"),
        )
    })
}
