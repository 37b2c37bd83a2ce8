//! The floor of `bench federation`: a bare QUIC echo over loopback with the
//! hub's own TLS and transport settings (`flotilla_hub::setup` configs made
//! from the hub's and a host's certificates). A server task in this process
//! accepts one connection and one bidirectional stream and writes back
//! every length-prefixed frame it reads; nothing else (no hub core, no
//! store, no daemon) is on the path.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use flotilla_actors::federation::{DEFAULT_MAX_FRAME, Frame, read_frame, write_frame};
use flotilla_actors::tls::Revocations;
use flotilla_hub::setup::{self, CertPaths};
use serde::Serialize;
use tokio::sync::Semaphore;

use crate::bench::percentile;

/// Frames in flight in the throughput run.
const WINDOW: usize = 64;

/// What the bare echo does on this machine.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct EchoFigures {
    /// Round trips timed, one at a time.
    pub(crate) round_trips: usize,
    pub(crate) rtt_p50_us: f64,
    pub(crate) rtt_p99_us: f64,
    /// Frames echoed in the throughput run.
    pub(crate) messages: usize,
    /// Frames in flight at once.
    pub(crate) window: usize,
    pub(crate) per_sec: f64,
}

/// Measures `round_trips` single round trips, then `messages` frames with
/// [`WINDOW`] in flight. `hub` holds the hub's certificates, `host` a
/// host's, issued at the same CA; `hub_name` is the hub's name.
pub(crate) async fn measure(
    hub: &CertPaths,
    host: &CertPaths,
    hub_name: &str,
    round_trips: usize,
    messages: usize,
) -> Result<EchoFigures> {
    let server_config = setup::hub_server_config(hub, Revocations::new())?;
    let server = quinn::Endpoint::server(server_config, SocketAddr::from(([127, 0, 0, 1], 0)))?;
    let addr = server.local_addr()?;
    let serving = tokio::spawn(serve(server));
    let mut client = quinn::Endpoint::client(SocketAddr::from(([127, 0, 0, 1], 0)))?;
    client.set_default_client_config(setup::host_client_config(host)?);
    let connection = client.connect(addr, hub_name)?.await?;
    let (mut send, mut recv) = connection.open_bi().await?;
    let mut times = Vec::with_capacity(round_trips);
    for nonce in 0..round_trips as u64 + 10 {
        let start = Instant::now();
        write_frame(&mut send, &Frame::Ping { nonce }, DEFAULT_MAX_FRAME).await?;
        read_frame(&mut recv, DEFAULT_MAX_FRAME)
            .await?
            .context("the echo server ended the stream")?;
        // The first few warm up the connection (congestion window, caches).
        if nonce >= 10 {
            times.push(start.elapsed());
        }
    }
    times.sort();
    let per_sec = windowed(&mut send, &mut recv, messages).await?;
    connection.close(0u32.into(), b"done");
    serving.abort();
    client.wait_idle().await;
    Ok(EchoFigures {
        round_trips,
        rtt_p50_us: percentile(&times, 0.5),
        rtt_p99_us: percentile(&times, 0.99),
        messages,
        window: WINDOW,
        per_sec,
    })
}

/// Echoes `messages` frames with up to [`WINDOW`] unanswered; frames/s.
async fn windowed(
    send: &mut quinn::SendStream,
    recv: &mut quinn::RecvStream,
    messages: usize,
) -> Result<f64> {
    let window = Arc::new(Semaphore::new(WINDOW));
    let start = Instant::now();
    let writing = async {
        for nonce in 0..messages as u64 {
            window.acquire().await?.forget();
            write_frame(send, &Frame::Ping { nonce }, DEFAULT_MAX_FRAME).await?;
        }
        anyhow::Ok(())
    };
    let reading = async {
        for _ in 0..messages {
            read_frame(recv, DEFAULT_MAX_FRAME)
                .await?
                .context("the echo server ended the stream")?;
            window.add_permits(1);
        }
        anyhow::Ok(())
    };
    tokio::try_join!(writing, reading)?;
    Ok(messages as f64 / start.elapsed().as_secs_f64())
}

/// Accepts one connection and one stream, and echoes its frames.
async fn serve(endpoint: quinn::Endpoint) -> Result<()> {
    let incoming = endpoint.accept().await.context("the endpoint closed")?;
    let connection = incoming.await?;
    let (mut send, mut recv) = connection.accept_bi().await?;
    while let Some(frame) = read_frame(&mut recv, DEFAULT_MAX_FRAME).await? {
        write_frame(&mut send, &frame, DEFAULT_MAX_FRAME).await?;
    }
    Ok(())
}
