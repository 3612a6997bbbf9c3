//! The daily LLM token budget rule, shared by the generator (which obeys it)
//! and the API (which reports it): `ok` under 80 % of the budget or with
//! none, `degraded` from 80 %, `exhausted` at 100 %. A project's state is
//! the worse of its own and its team's.

use sqlx::prelude::FromRow;

/// Share of a budget past which generation degrades, in percent.
pub const DEGRADED_PERCENT: i64 = 80;

/// Ordered from best to worst, so `max` is the worse of two.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum State {
    Ok,
    Degraded,
    Exhausted,
}

impl State {
    /// The state of `used` tokens against `budget` (`None`: unlimited).
    pub fn of(used: i64, budget: Option<i64>) -> State {
        match budget {
            Some(b) if used >= b => State::Exhausted,
            Some(b) if i128::from(used) * 100 >= i128::from(b) * i128::from(DEGRADED_PERCENT) => {
                State::Degraded
            }
            _ => State::Ok,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            State::Ok => "ok",
            State::Degraded => "degraded",
            State::Exhausted => "exhausted",
        }
    }
}

/// A project's and its team's budgets and what each used today.
#[derive(Clone, Copy, Debug, FromRow)]
pub struct Today {
    pub project_budget: Option<i64>,
    pub project_used: i64,
    pub team_budget: Option<i64>,
    pub team_used: i64,
}

impl Today {
    /// True when either budget is set.
    pub fn applies(&self) -> bool {
        self.project_budget.is_some() || self.team_budget.is_some()
    }

    /// The worse of the project's and the team's state.
    pub fn state(&self) -> State {
        State::of(self.project_used, self.project_budget).max(State::of(self.team_used, self.team_budget))
    }
}

#[cfg(test)]
mod tests {
    use super::State;

    #[test]
    fn thresholds_are_80_and_100_percent_without_overflow() {
        assert_eq!(State::of(10, None), State::Ok);
        assert_eq!(State::of(79, Some(100)), State::Ok);
        assert_eq!(State::of(80, Some(100)), State::Degraded);
        assert_eq!(State::of(99, Some(100)), State::Degraded);
        assert_eq!(State::of(100, Some(100)), State::Exhausted);
        assert_eq!(State::of(i64::MAX, Some(i64::MAX - 1)), State::Exhausted);
        assert_eq!(State::of(i64::MAX - 2, Some(i64::MAX)), State::Degraded);
    }
}
