//! Lane calls across hosts, in the hub's core: a call from one host is
//! relayed to its target with the requester's groups from the hub's roster
//! (never what the asking host claims), and the answer goes back only to
//! the host that asked. A call to a host that is not linked is answered at
//! once (except while hosts relink after the hub's own start, see
//! [`super::relink`]): nothing is queued, nothing falls back to running
//! elsewhere.
//!
//! Relaying a lane start is the one way a host's peer enters another
//! host's private group: the hub grants the lane its requester's private
//! group (durably, before the call leaves) and takes the grant back if the
//! start fails ([`crate::grants`]).

use flotilla_actors::federation::{Frame, LaneAnswer, LaneCall};
use flotilla_actors::names::HostName;
use flotilla_actors::protocol::{ControlError, ErrorCode};

use super::{CoreState, Grant};
use crate::grants::lane_start_grant;

impl CoreState {
    /// Relays a lane call to its target with the requester's verified
    /// groups, or answers it with why not.
    pub(super) fn on_lane_call(&mut self, host: &HostName, mut call: LaneCall) {
        let target = std::mem::replace(&mut call.host, host.clone());
        let refuse = |code: ErrorCode, why: String| LaneAnswer {
            call: call.call,
            host: target.clone(),
            result: Err(lane_error(code, &why)),
        };
        let answer = if call.requester.host != *host {
            Some(refuse(
                ErrorCode::Forbidden,
                format!(
                    "{host} cannot ask on behalf of {}, a peer of another host",
                    call.requester
                ),
            ))
        } else if let Some(groups) = self
            .roster
            .peer(&call.requester)
            .map(|p| p.memberships().collect())
        {
            if !self.links.contains_key(&target)
                && target != *host
                && self.relink.may_wait(&target, std::time::Instant::now())
            {
                tracing::info!(%target, asker = %host, "a lane call waits for its target to relink");
                call.host = target;
                self.relink.wait(host.clone(), call);
                return;
            }
            if self.links.contains_key(&target) && target != *host {
                call.groups = groups;
                match self.grant_for(&target, &call) {
                    Ok(grant) => {
                        self.calls
                            .insert((target.clone(), host.clone(), call.call), grant);
                        self.send(&target, Frame::LaneCall(call.clone()));
                        None
                    }
                    Err(why) => Some(refuse(ErrorCode::Unavailable, why)),
                }
            } else {
                Some(refuse(
                    ErrorCode::Unavailable,
                    format!(
                        "{target} is not linked to the hub now; nothing was started there, and nothing runs locally instead"
                    ),
                ))
            }
        } else {
            Some(refuse(
                ErrorCode::Unavailable,
                format!(
                    "{} is not in the hub's roster yet; retry in a moment",
                    call.requester
                ),
            ))
        };
        if let Some(answer) = answer {
            self.send(host, Frame::LaneAnswer(answer));
        }
    }

    /// The private-group grant a lane start needs, recorded durably; `None`
    /// when the call is not a start or the grant already existed.
    fn grant_for(&mut self, target: &HostName, call: &LaneCall) -> Result<Option<Grant>, String> {
        let Some((lane, group)) = lane_start_grant(target, &call.op, &call.args, &call.requester)
        else {
            return Ok(None);
        };
        if !self.roster.grant(lane.clone(), group.clone()) {
            return Ok(None);
        }
        if let Err(e) = self.store.put_grant(&lane, &group) {
            let _ = self.roster.revoke(&lane, &group);
            tracing::error!("cannot record a private-group grant: {e}");
            return Err(format!(
                "the hub could not record the lane's membership in {group} ({e}); nothing was started, retry"
            ));
        }
        Ok(Some((lane, group)))
    }

    /// Relays an answer to the host that asked, if it asked this host. A
    /// failed start takes back the grant it made.
    pub(super) fn on_lane_answer(&mut self, host: &HostName, mut answer: LaneAnswer) {
        let asker = std::mem::replace(&mut answer.host, host.clone());
        if let Some(grant) = self
            .calls
            .remove(&(host.clone(), asker.clone(), answer.call))
        {
            if let (Some((lane, group)), Err(_)) = (grant, &answer.result)
                && self.roster.revoke(&lane, &group)
                && let Err(e) = self.store.drop_grant(&lane, &group)
            {
                tracing::warn!("cannot forget an unused private-group grant: {e}");
            }
            self.send(&asker, Frame::LaneAnswer(answer));
        } else {
            tracing::warn!(%host, call = answer.call, "an answer to no relayed call; dropped");
        }
    }

    /// The relink grace is over: calls still waiting for their targets are
    /// refused as a call to a host that is not linked is.
    pub(super) fn relink_grace_over(&mut self) {
        for (asker, call) in self.relink.end() {
            self.on_lane_call(&asker, call);
        }
    }

    /// A host's link dropped: its unanswered calls fail, and calls it made
    /// are forgotten.
    pub(super) fn fail_calls_to(&mut self, host: &HostName) {
        let lost: Vec<_> = self
            .calls
            .keys()
            .filter(|(target, asker, _)| target == host || asker == host)
            .cloned()
            .collect();
        for (target, asker, call) in lost {
            let grant = self.calls.remove(&(target.clone(), asker.clone(), call));
            if target == *host {
                // A start's grant names its lane; other calls name theirs
                // only on the asking host, which says it (`remote_lanes`).
                let lane = grant
                    .flatten()
                    .map_or_else(|| "NAME".to_owned(), |(lane, _)| lane.name.to_string());
                let why = format!(
                    "{host}'s link dropped before it answered; a lane started there keeps running: \
                     ask again (`flotilla lane wait {lane} --host {host}`) once it is back"
                );
                let answer = LaneAnswer {
                    call,
                    host: target,
                    result: Err(lane_error(ErrorCode::Unavailable, &why)),
                };
                self.send(&asker, Frame::LaneAnswer(answer));
            }
        }
    }
}

/// A control error (as the lane answer carries it) for a refused call.
fn lane_error(code: ErrorCode, why: &str) -> String {
    let error = ControlError::new(code, why.to_owned());
    serde_json::to_string(&error).unwrap_or_else(|_| why.to_owned())
}
