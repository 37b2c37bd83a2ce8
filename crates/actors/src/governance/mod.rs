//! Governed delivery's rules, as plain data and functions with no IO: a
//! claim's id ([`claim`]), run records and their encoding in git commits
//! ([`record`]), the board folded from them ([`board`]) and the user's
//! policy ([`policy`]).
//!
//! The host drives git and lanes; it hands the facts to these functions and
//! does what they decide. Nothing here may run git, read a file or look at
//! the time.

pub mod board;
pub mod claim;
pub mod policy;
pub mod record;

pub use board::{Board, ClaimState, ClaimStatus};
pub use claim::ClaimId;
pub use policy::Policy;
pub use record::{Entry, Record};
