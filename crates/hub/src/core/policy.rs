//! The operator's group list in the core: putting a new list in force
//! (every host screened again, the hosts that see a changed peer told) and
//! telling the operator, in the log, each membership it dropped.

use super::CoreState;
use crate::group_policy::GroupPolicy;
use crate::roster::Change;

impl CoreState {
    /// Puts a new group list in force.
    pub(super) fn set_policy(&mut self, policy: GroupPolicy) {
        tracing::info!(listed = policy.listed().len(), "group list in force");
        for change in self.roster.set_policy(policy) {
            log_refused(&change);
            self.persist(&change.origin);
            self.tell(&change);
        }
    }
}

/// Tells the operator which memberships the group list dropped.
pub(super) fn log_refused(change: &Change) {
    for (peer, group) in &change.refused {
        tracing::warn!(
            host = %change.origin,
            %peer,
            %group,
            "the group list (`flotilla hub groups`) does not let {} have peers in {group}; \
             {peer}'s membership in it was dropped (its other groups and the link are kept)",
            change.origin
        );
    }
}
