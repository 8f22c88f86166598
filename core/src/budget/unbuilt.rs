//! A build without the `guards` feature has no retry budget: [`RetryBudget`] has no value, so a
//! run's [`crate::run::Guards`] never holds one, and the code that would ask it compiles to
//! nothing. Its methods are the ones a run calls, each unreachable.

use super::{BudgetEvent, BudgetVerdict, RetryCause};

/// No retry budget: this build leaves out the `guards` feature (README, "Features").
#[derive(Debug, Clone, PartialEq)]
pub enum RetryBudget {}

impl RetryBudget {
    /// Never called: no budget exists.
    pub fn record(&mut self, _now_ms: u64, _event: BudgetEvent) {
        match *self {}
    }

    /// Never called: no budget exists.
    pub fn try_retry(&mut self, _now_ms: u64, _cause: RetryCause) -> BudgetVerdict {
        match *self {}
    }
}
