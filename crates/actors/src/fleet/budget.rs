//! A fleet's budget card and the check made before every dispatch: a
//! dispatch that would go past a cap does not happen. Caps are optional;
//! a card with none is unlimited. Spending is counted from the lanes'
//! per-turn usage, so the check needs no estimate of a model's answer:
//! a call is refused when the calls, tokens or cost already spent leave
//! no room for one more.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The caps of one fleet (a budget file, TOML or JSON, holds these).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BudgetCard {
    /// Model calls (turns dispatched to any member).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_calls: Option<u64>,
    /// Rounds (supervisor turns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u64>,
    /// Wall-clock hours since the fleet started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_hours: Option<f64>,
    /// Tokens (input + output) over every member.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// Cost caps per account, in the currency the CLI reports (USD for
    /// those that report one).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cost: BTreeMap<String, f64>,
}

/// What a fleet has spent so far.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Spent {
    /// Model calls dispatched.
    pub model_calls: u64,
    /// Supervisor rounds dispatched.
    pub rounds: u64,
    /// Tokens reported by finished turns.
    pub tokens: u64,
    /// Cost reported by finished turns, per account.
    pub cost: BTreeMap<String, f64>,
}

/// What the next dispatch would be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dispatch<'a> {
    /// A supervisor turn (a round and a model call), billed to `account`.
    Round {
        /// The account the call is billed to.
        account: &'a str,
    },
    /// A worker turn (a model call), billed to `account`.
    Work {
        /// The account the call is billed to.
        account: &'a str,
    },
}

/// The cap that stopped a dispatch.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BudgetStop {
    /// Model calls.
    #[error("the budget allows {cap} model calls and {spent} were made")]
    ModelCalls {
        /// The cap.
        cap: u64,
        /// Spent.
        spent: u64,
    },
    /// Rounds.
    #[error("the budget allows {cap} rounds and {spent} were run")]
    Rounds {
        /// The cap.
        cap: u64,
        /// Spent.
        spent: u64,
    },
    /// Wall time.
    #[error("the budget allows {cap} wall hours and {spent:.2} have passed")]
    WallHours {
        /// The cap.
        cap: f64,
        /// Spent.
        spent: f64,
    },
    /// Tokens.
    #[error("the budget allows {cap} tokens and {spent} were used")]
    Tokens {
        /// The cap.
        cap: u64,
        /// Spent.
        spent: u64,
    },
    /// Cost on one account.
    #[error("the budget allows {cap:.2} on account {account:?} and {spent:.2} were spent")]
    Cost {
        /// The account.
        account: String,
        /// The cap.
        cap: f64,
        /// Spent.
        spent: f64,
    },
}

impl BudgetCard {
    /// Parses a budget file: TOML, or JSON when it starts with `{`.
    pub fn parse(text: &str) -> Result<BudgetCard, String> {
        let card: BudgetCard = if text.trim_start().starts_with('{') {
            serde_json::from_str(text).map_err(|e| e.to_string())?
        } else {
            toml::from_str(text).map_err(|e| e.to_string())?
        };
        let negative = card.cost.values().any(|c| !(c.is_finite() && *c >= 0.0))
            || card.wall_hours.is_some_and(|h| !(h.is_finite() && h > 0.0));
        if negative {
            return Err("caps must be positive numbers".to_owned());
        }
        Ok(card)
    }

    /// May `next` be dispatched, `elapsed` after the fleet started, with
    /// `spent` so far? Checked before the dispatch, never after.
    pub fn allows(
        &self,
        spent: &Spent,
        elapsed: Duration,
        next: Dispatch<'_>,
    ) -> Result<(), BudgetStop> {
        if let Some(cap) = self.model_calls
            && spent.model_calls >= cap
        {
            let spent = spent.model_calls;
            return Err(BudgetStop::ModelCalls { cap, spent });
        }
        let account = match next {
            Dispatch::Round { account } => {
                if let Some(cap) = self.rounds
                    && spent.rounds >= cap
                {
                    let spent = spent.rounds;
                    return Err(BudgetStop::Rounds { cap, spent });
                }
                account
            }
            Dispatch::Work { account } => account,
        };
        let hours = elapsed.as_secs_f64() / 3600.0;
        if let Some(cap) = self.wall_hours
            && hours >= cap
        {
            return Err(BudgetStop::WallHours { cap, spent: hours });
        }
        if let Some(cap) = self.tokens
            && spent.tokens >= cap
        {
            let spent = spent.tokens;
            return Err(BudgetStop::Tokens { cap, spent });
        }
        if let Some(&cap) = self.cost.get(account) {
            let spent = spent.cost.get(account).copied().unwrap_or(0.0);
            if spent >= cap {
                let account = account.to_owned();
                return Err(BudgetStop::Cost {
                    account,
                    cap,
                    spent,
                });
            }
        }
        Ok(())
    }
}

impl Spent {
    /// Counts a dispatch as it starts.
    pub fn dispatched(&mut self, what: Dispatch<'_>) {
        self.model_calls += 1;
        if matches!(what, Dispatch::Round { .. }) {
            self.rounds += 1;
        }
    }

    /// Adds a finished turn's usage.
    pub fn used(&mut self, account: &str, tokens: u64, cost: Option<f64>) {
        self.tokens = self.tokens.saturating_add(tokens);
        if let Some(cost) = cost.filter(|c| c.is_finite() && *c > 0.0) {
            *self.cost.entry(account.to_owned()).or_default() += cost;
        }
    }
}

/// May another turn start with `busy` running, under `--max-busy`?
pub fn may_start_turn(busy: usize, max_busy: Option<usize>) -> bool {
    max_busy.is_none_or(|max| busy < max)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const WORK: Dispatch<'static> = Dispatch::Work { account: "default" };

    #[test]
    fn a_budget_of_three_calls_stops_the_fourth_before_it_happens() {
        let card = BudgetCard::parse("model_calls = 3\n").unwrap();
        let mut spent = Spent::default();
        for _ in 0..3 {
            card.allows(&spent, Duration::ZERO, WORK).unwrap();
            spent.dispatched(WORK);
        }
        assert_eq!(
            card.allows(&spent, Duration::ZERO, WORK),
            Err(BudgetStop::ModelCalls { cap: 3, spent: 3 })
        );
    }

    #[test]
    fn each_cap_stops_with_its_own_reason() {
        let card = BudgetCard::parse(
            r#"{"rounds": 1, "wall_hours": 1, "tokens": 100, "cost": {"anthropic": 0.5}}"#,
        )
        .unwrap();
        let mut spent = Spent::default();
        let round = Dispatch::Round {
            account: "anthropic",
        };
        spent.dispatched(round);
        assert!(matches!(
            card.allows(&spent, Duration::ZERO, round),
            Err(BudgetStop::Rounds { .. })
        ));
        card.allows(&spent, Duration::ZERO, WORK).unwrap();
        let late = card.allows(&spent, Duration::from_secs(3600), WORK);
        assert!(
            matches!(late, Err(BudgetStop::WallHours { .. })),
            "{late:?}"
        );
        spent.used("anthropic", 40, Some(0.5));
        let anthropic = Dispatch::Work {
            account: "anthropic",
        };
        let stop = card.allows(&spent, Duration::ZERO, anthropic).unwrap_err();
        assert_eq!(
            stop.to_string(),
            "the budget allows 0.50 on account \"anthropic\" and 0.50 were spent"
        );
        card.allows(&spent, Duration::ZERO, WORK).unwrap();
        spent.used("default", 60, None);
        assert!(matches!(
            card.allows(&spent, Duration::ZERO, WORK),
            Err(BudgetStop::Tokens { .. })
        ));
    }

    #[test]
    fn an_empty_card_is_unlimited_and_bad_cards_are_refused() {
        let card = BudgetCard::parse("").unwrap();
        let spent = Spent {
            model_calls: u64::MAX,
            ..Spent::default()
        };
        card.allows(&spent, Duration::from_secs(1 << 40), WORK)
            .unwrap();
        assert!(BudgetCard::parse("calls = 3").is_err(), "unknown field");
        assert!(BudgetCard::parse("wall_hours = -1").is_err());
        assert!(may_start_turn(7, None));
        assert!(!may_start_turn(2, Some(2)));
    }
}
