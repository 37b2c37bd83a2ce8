//! Service requests on the host's side: a `fleet.request` is handed to
//! the fleet's run, and its caller is answered when the run says the
//! member's reply passed its check or was bounced three times. Callers
//! are kept in memory only: after a daemon restart a request still runs,
//! and its end is in the fleet's history.

use flotilla_actors::fleet::service::Answer;
use flotilla_actors::fleet::steps::MAX_BOUNCES;
use flotilla_actors::names::PeerName;
use flotilla_actors::protocol::{ControlError, ErrorCode, FleetRequestArgs, FleetRequestReply};

use super::actions::perform;
use super::runner::{FleetsRef, FleetsState, Reply, with_rules};
use super::view;

impl FleetsState {
    /// `fleet.request`: takes the request; the caller waits for its answer.
    pub(super) async fn request(
        &mut self,
        myself: &FleetsRef,
        args: FleetRequestArgs,
        reply: Reply<FleetRequestReply>,
    ) {
        let name = args.name.clone();
        let record = match self.fleets.get_mut(&name) {
            Some(r) if r.stopped => {
                let _ = reply.send(Err(ControlError::new(
                    ErrorCode::Conflict,
                    format!("the fleet {name} was stopped"),
                )));
                return;
            }
            Some(r) => r,
            None => {
                let _ = reply.send(Err(view::no_such_fleet(&name)));
                return;
            }
        };
        let req = args.request;
        let taken = with_rules(record, |run, r| run.request(req.to, req.body, req.reply, r));
        let (id, actions) = match taken {
            Ok(taken) => taken,
            Err(why) => {
                let _ = reply.send(Err(ControlError::new(ErrorCode::BadRequest, why)
                    .with_hint(format!("`flotilla fleet status {name}` lists its members"))));
                return;
            }
        };
        if let Err(e) = self.ctx.commit.put_fleet(record).await {
            let _ = reply.send(Err(crate::registry::store_error(e)));
            return;
        }
        self.answers.insert((name, id), reply);
        perform(&self.ctx, myself, record, actions);
    }

    pub(super) fn answer(&mut self, name: &PeerName, id: u64, answer: Answer) {
        let Some(port) = self.answers.remove(&(name.clone(), id)) else {
            tracing::info!(fleet = %name, id, "a request was answered after its caller left");
            return;
        };
        let (passed, reply, faults, bounces) = match answer {
            Answer::Passed { reply, bounces } => (true, Some(reply), Vec::new(), bounces),
            Answer::Failed(faults) => (false, None, faults, MAX_BOUNCES),
        };
        let _ = port.send(Ok(FleetRequestReply {
            schema: "flotilla.fleet-request.v1".into(),
            name: name.clone(),
            id,
            passed,
            reply,
            faults,
            bounces,
        }));
    }
}
