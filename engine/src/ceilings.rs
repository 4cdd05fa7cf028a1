//! A runner's ceilings: the most any graph it runs may ask for. A graph
//! sets its own limits (`limits.max_steps`, a fan-out's `max_items`) below
//! them, never above: the lower of the two applies, and a run stopped by a
//! ceiling fails naming it, so whoever reads the failure knows it was the
//! server's rule and not the graph's. A server sets them from its
//! configuration; the command line and library users have none unless
//! they set some.
//!
//! The time a run may be active is per run, not per graph, and is set on
//! [`crate::run::RunOptions::max_active`].

/// The most a runner lets any graph ask for; `None`: no ceiling.
#[derive(Clone, Debug, Default)]
pub struct Ceilings {
    /// Super-steps per run (`max_steps_per_run`).
    pub max_steps: Option<u32>,
    /// Items one fan-out may start (`max_fan_out_items`).
    pub max_fan_out_items: Option<usize>,
    /// Model calls in flight at once, over every run compiled with the
    /// registry (`max_model_calls`).
    #[cfg(feature = "runtime")]
    pub model_calls: Option<crate::model::ModelGate>,
}

/// The names failures give the ceilings, as a server's configuration
/// spells them.
pub mod names {
    /// Steps per run.
    pub const STEPS: &str = "max_steps_per_run";
    /// Items per fan-out.
    pub const FAN_OUT_ITEMS: &str = "max_fan_out_items";
    /// Active time per run.
    pub const ACTIVE_TIME: &str = "max_run_active_secs";
}

/// Which of a graph's limit and a ceiling applies: the lower, and whether
/// that is the ceiling.
pub(crate) fn lower<T: Ord + Copy>(own: T, ceiling: Option<T>) -> (T, bool) {
    match ceiling {
        Some(ceiling) if ceiling < own => (ceiling, true),
        _ => (own, false),
    }
}

#[cfg(test)]
mod tests {
    use super::lower;

    #[test]
    fn the_lower_of_a_limit_and_a_ceiling_applies() {
        assert_eq!(lower(100, Some(10)), (10, true));
        assert_eq!(lower(5, Some(10)), (5, false));
        assert_eq!(lower(10, Some(10)), (10, false));
        assert_eq!(lower(7, None), (7, false));
    }
}
