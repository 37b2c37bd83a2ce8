//! One established link to the hub, from hello-ack to its end: announces
//! this host's peers (then only their changes), hands messages for other
//! hosts to the hub in order, stores what the hub delivers, records the
//! hub's verdicts and receipts, and pings to measure the round trip and to
//! notice a dead link.
//!
//! Owns the link's streams: a reader task feeds frames in; everything is
//! written from this one loop, in order. Every frame that changes state is
//! acknowledged only after the store has it on disk; what the hub
//! announces of other hosts' peers is `announced`'s. Must not reconnect
//! (the driver does) or decide routing (the router and the hub do).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_actors::federation::{
    DEFAULT_MAX_FRAME, Delivered, ForwardOutcome, Frame, LaneAnswer, read_frame, stage, write_frame,
};
use flotilla_hub::HubSession;
use tokio::sync::{mpsc, oneshot};

use super::resend::Resend;
use super::roster::SentRoster;
use super::state::{Liveness, Tick};
use crate::context::HostContext;
use crate::remote_lanes::OutgoingCall;
use crate::remote_lanes::{CallEnd, end_calls};

mod forwards;

/// Messages handed to the hub and not yet answered, at most.
const WINDOW: usize = 256;

/// Why a link ended: `None` when asked to stop.
pub(super) type Ended = Option<String>;

/// The link's own state.
struct Link<'a> {
    ctx: &'a Arc<HostContext>,
    send: quinn::SendStream,
    roster: SentRoster,
    /// The last queue position handed to the hub on this link.
    forwarded_to: u64,
    /// Forwards not yet answered.
    inflight: usize,
    /// When to send the outbox again after the hub refused a message for
    /// now.
    resend: Resend,
    /// Lane calls to other hosts waiting for their answers, by number,
    /// with how many datagrams the link had received when each was sent.
    calls: HashMap<u64, (oneshot::Sender<CallEnd>, u64)>,
    /// The last lane call number used.
    last_call: u64,
    /// Frames to send once something finished off the loop (a commit, a
    /// lane call served here), or why the link must end.
    later: mpsc::UnboundedSender<Result<Frame, String>>,
}

/// Runs the link until it fails (returns why) or `stop` fires.
pub(super) async fn run(
    ctx: &Arc<HostContext>,
    session: HubSession,
    liveness: &mut Liveness,
    on_rtt: &mut (dyn FnMut(Duration) + Send),
    stop: &mut oneshot::Receiver<()>,
) -> Ended {
    let (connection, send, recv) = session.into_parts();
    let (tx, mut frames) = mpsc::channel(WINDOW);
    let reader = tokio::spawn(read_frames(recv, tx));
    let (later, mut ready) = mpsc::unbounded_channel();
    let (calls_tx, mut calls) = mpsc::channel(WINDOW);
    ctx.hub_calls.send_replace(Some(calls_tx));
    let mut link = Link {
        ctx,
        send,
        roster: SentRoster::default(),
        forwarded_to: 0,
        inflight: 0,
        resend: Resend::default(),
        calls: HashMap::new(),
        last_call: 0,
        later,
    };
    let mut directory = ctx.directory.subscribe();
    // Messages for the hub are handed on once committed, while their log
    // record syncs (the sender is answered only after both). Only an
    // acceptance adds to the outbox, so other commits (deliveries stored,
    // inboxes read) do not make the link read it again.
    let mut forwards = ctx.commit.forwards_ready();
    // Sooner still: as soon as they are accepted (`forward_feed`).
    let mut fed = ctx.commit.forward_feed().open();
    let mut ticker = tokio::time::interval(liveness.interval());
    let ended = async {
        let reset = link.roster.reset(&ctx.host, &ctx.directory());
        link.write(Frame::RosterDelta(reset)).await?;
        link.pump().await?;
        loop {
            tokio::select! {
                _ = &mut *stop => return Ok(None),
                frame = frames.recv() => match frame {
                    Some(Ok(frame)) => link.on_frame(frame, liveness, on_rtt).await?,
                    Some(Err(reason)) => return Err(reason),
                    None => return Err("the hub link's reader stopped".to_owned()),
                },
                Ok(()) = directory.changed() => {
                    let now = directory.borrow_and_update().clone();
                    if let Some(delta) = link.roster.delta(&ctx.host, &now) {
                        link.write(Frame::RosterDelta(delta)).await?;
                    }
                }
                Ok(()) = forwards.changed() => link.pump().await?,
                Ok(()) = fed.changed() => link.pump().await?,
                () = resend_at(link.resend.due_at()), if link.inflight == 0 => {
                    link.resend_if_due().await?;
                }
                Some(out) = calls.recv() => {
                    link.lane_call(out, connection.stats().udp_rx.datagrams).await?;
                }
                Some(done) = ready.recv() => link.write(done?).await?,
                _ = ticker.tick() => match liveness.tick(std::time::Instant::now()) {
                    Tick::Ping(nonce) => link.write(Frame::Ping { nonce }).await?,
                    Tick::Wait => {}
                    Tick::Dead(reason) => return Err(reason),
                },
                reason = connection.closed() => {
                    return Err(format!("the hub link was closed: {reason}"));
                }
            }
        }
    }
    .await;
    reader.abort();
    ctx.commit.forward_feed().close();
    ctx.hub_calls.send_replace(None);
    end_calls(&connection, &mut link.calls, &mut calls);
    match ended {
        Ok(None) => {
            let _ = link.send.finish();
            connection.close(flotilla_hub::transport::close::NORMAL.into(), b"bye");
            None
        }
        Ok(Some(reason)) | Err(reason) => {
            // A stream's error says only "connection lost"; the connection
            // knows why (a stateless reset, the hub's close, a timeout).
            let reason = match connection.close_reason() {
                Some(why) => format!("the hub link was closed: {why}"),
                None => reason,
            };
            connection.close(
                flotilla_hub::transport::close::NORMAL.into(),
                b"link failed",
            );
            Some(reason)
        }
    }
}

/// Waits until `at`, or forever when nothing is to be sent again.
async fn resend_at(at: Option<std::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await,
        None => std::future::pending().await,
    }
}

/// Reads frames into `tx` until the stream ends or fails.
async fn read_frames(mut recv: quinn::RecvStream, tx: mpsc::Sender<Result<Frame, String>>) {
    loop {
        let item = match read_frame(&mut recv, DEFAULT_MAX_FRAME).await {
            Ok(Some(frame)) => Ok(frame),
            Ok(None) => Err("the hub ended the link".to_owned()),
            Err(e) => Err(e.to_string()),
        };
        let last = item.is_err();
        if tx.send(item).await.is_err() || last {
            return;
        }
    }
}

impl Link<'_> {
    async fn write(&mut self, frame: Frame) -> Result<(), String> {
        stage::frame("host.sent", &frame);
        write_frame(&mut self.send, &frame, DEFAULT_MAX_FRAME)
            .await
            .map_err(|e| format!("cannot write to the hub: {e}"))
    }

    /// Runs `work` off the loop; its frame (if any) is sent when it is done,
    /// and its failure ends the link (the hub sends again what was not
    /// acknowledged).
    fn after<T, F>(&self, work: F)
    where
        T: Into<Option<Frame>>,
        F: std::future::Future<Output = Result<T, flotilla_actors::store::StoreError>>
            + Send
            + 'static,
    {
        let later = self.later.clone();
        tokio::spawn(async move {
            match work.await {
                Ok(done) => {
                    if let Some(frame) = done.into() {
                        let _ = later.send(Ok(frame));
                    }
                }
                Err(e) => {
                    let _ = later.send(Err(format!("cannot store what the hub sent: {e}")));
                }
            }
        });
    }

    /// Sends a lane call for another host, after any roster change (so the
    /// hub knows the requester).
    async fn lane_call(&mut self, out: OutgoingCall, received: u64) -> Result<(), String> {
        if let Some(delta) = self.roster.delta(&self.ctx.host, &self.ctx.directory()) {
            self.write(Frame::RosterDelta(delta)).await?;
        }
        self.last_call += 1;
        let mut call = out.call;
        call.call = self.last_call;
        self.calls.insert(call.call, (out.reply, received));
        self.write(Frame::LaneCall(call)).await
    }

    async fn on_frame(
        &mut self,
        frame: Frame,
        liveness: &mut Liveness,
        on_rtt: &mut (dyn FnMut(Duration) + Send),
    ) -> Result<(), String> {
        let store = |e: flotilla_actors::store::StoreError| format!("cannot store: {e}");
        stage::frame("host.received", &frame);
        match frame {
            Frame::Pong { nonce } => {
                if let Some(rtt) = liveness.pong(nonce, std::time::Instant::now()) {
                    on_rtt(rtt);
                }
            }
            Frame::Ping { nonce } => self.write(Frame::Pong { nonce }).await?,
            Frame::RosterDelta(delta) => super::announced::received(self.ctx, delta),
            // Each write is queued on the store now, in arrival order, and
            // acknowledged once it is on disk; meanwhile the loop goes on, so
            // many share one commit.
            Frame::Deliver(deliver) => {
                let (seq, id) = (deliver.seq, deliver.message.id.clone());
                let stored = self
                    .ctx
                    .commit
                    .submit_delivery(deliver)
                    .await
                    .map_err(store)?;
                let ctx = self.ctx.clone();
                self.after(async move {
                    let gone = stored.await?;
                    stage::reached("deliver.stored", &id);
                    crate::crash_point::reached(&ctx, "delivery.stored");
                    Ok(Frame::Delivered(Delivered { seq, id, gone }))
                });
            }
            Frame::Forwarded(verdict) => {
                crate::crash_point::reached(self.ctx, "forward.answered");
                match &verdict.outcome {
                    ForwardOutcome::Refused { code, .. } if code.is_transient() => {
                        self.resend.refused(std::time::Instant::now());
                    }
                    ForwardOutcome::Queued => self.resend.queued(),
                    ForwardOutcome::Refused { .. } => {}
                }
                // Senders waiting for it read it at once; its record is
                // written without an fsync (a crash only repeats the
                // forward, which the hub queues once).
                let (id, outcome) = (verdict.id.clone(), verdict.outcome.clone());
                self.ctx.verdicts.heard(&id, &outcome);
                let submitted = self
                    .ctx
                    .commit
                    .submit_forwarded(verdict.id, verdict.outcome)
                    .await;
                let stored = submitted.map_err(|e| {
                    self.ctx.verdicts.recorded(&id, &outcome);
                    store(e)
                })?;
                let ctx = self.ctx.clone();
                self.after(async move {
                    let stored = stored.await;
                    ctx.verdicts.recorded(&id, &outcome);
                    stored?;
                    stage::reached("verdict.stored", &id);
                    crate::crash_point::reached(&ctx, "verdict.stored");
                    Ok(None)
                });
                // The queue position is past it already: nothing is sent twice.
                self.inflight = self.inflight.saturating_sub(1);
                self.resend_if_due().await?;
                self.pump().await?;
            }
            Frame::Receipt(receipt) => {
                let seq = receipt.seq;
                let stored = self
                    .ctx
                    .commit
                    .submit_receipt(receipt)
                    .await
                    .map_err(store)?;
                self.after(async move { stored.await.map(|()| Frame::ReceiptAck { seq }) });
            }
            Frame::LaneCall(call) => {
                let ctx = self.ctx.clone();
                let later = self.later.clone();
                tokio::spawn(async move {
                    let (number, asker) = (call.call, call.host.clone());
                    let result = crate::remote_lanes::serve::serve(&ctx, call).await;
                    let answer = LaneAnswer {
                        call: number,
                        host: asker,
                        result,
                    };
                    let _ = later.send(Ok(Frame::LaneAnswer(answer)));
                });
            }
            Frame::LaneAnswer(answer) => {
                if let Some((reply, _)) = self.calls.remove(&answer.call) {
                    let _ = reply.send(CallEnd::Answered(answer.result));
                }
            }
            other => tracing::debug!(
                kind = other.kind(),
                "unexpected frame from the hub; ignored"
            ),
        }
        Ok(())
    }
}
