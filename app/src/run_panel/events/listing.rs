//! Which events the log lists and which of them it draws. A busy run logs
//! tens of thousands of events and the log updates once per frame, so the
//! matches are kept and only the new events are filtered each frame, and
//! only the rows in view (and a few either side) become DOM nodes.

use heddle_engine::ids::RunId;
use std::ops::Range;

use heddle_engine::run::Event;

use super::describe::{Group, group, node_of, summary, type_of};
use crate::live::RunLog;

/// The height of one row, in CSS pixels (`.event-row` in the stylesheet).
pub const ROW_PX: f64 = 24.0;

/// Rows drawn beyond each edge of the view, so a quick scroll shows no gap.
const OVERSCAN: usize = 12;

/// The view's height before it was measured (on the server, say).
const UNMEASURED_PX: f64 = 480.0;

/// What the person asked to see.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    pub groups: Vec<Group>,
    /// A node id, or empty for every node.
    pub node: String,
    /// Lower-case text to look for, or empty.
    pub text: String,
}

impl Filter {
    /// Whether `event` is listed; `name` names nodes as the list does, so
    /// the text is looked for in what is shown.
    pub fn matches(&self, event: &Event, name: &dyn Fn(&str) -> String) -> bool {
        self.groups.contains(&group(event))
            && (self.node.is_empty() || node_of(event) == Some(self.node.as_str()))
            && (self.text.is_empty()
                || type_of(event).contains(&self.text)
                || node_of(event)
                    .is_some_and(|node| name(node).to_lowercase().contains(&self.text))
                || summary(event, name).to_lowercase().contains(&self.text))
    }
}

/// The positions in a run log of the events a filter matches, brought up to
/// date by looking only at events added since the last update.
#[derive(Debug, Default)]
pub struct Matches {
    filter: Option<Filter>,
    run_id: Option<RunId>,
    /// How many of the log's events have been looked at.
    seen: usize,
    positions: Vec<usize>,
}

impl Matches {
    /// Brings the matches up to date with `log` under `filter`. A new
    /// filter, another run, or a log that was reset starts over.
    pub fn update(&mut self, log: &RunLog, filter: &Filter, name: &dyn Fn(&str) -> String) {
        let same = self.filter.as_ref() == Some(filter)
            && self.run_id == log.run_id
            && self.seen <= log.events.len();
        if !same {
            self.filter = Some(filter.clone());
            self.run_id.clone_from(&log.run_id);
            self.seen = 0;
            self.positions.clear();
        }
        let fresh = log.events[self.seen..]
            .iter()
            .enumerate()
            .filter(|(_, event)| filter.matches(event, name))
            .map(|(offset, _)| self.seen + offset);
        self.positions.extend(fresh);
        self.seen = log.events.len();
    }

    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// The number of the first match whose log position passes `test`.
    pub fn find(&self, test: impl Fn(usize) -> bool) -> Option<usize> {
        self.positions.iter().position(|&at| test(at))
    }

    /// The log positions of the matches in `range` (of match numbers).
    pub fn positions(&self, range: Range<usize>) -> &[usize] {
        let end = range.end.min(self.positions.len());
        &self.positions[range.start.min(end)..end]
    }
}

/// The rows to draw, of `total`, for a list scrolled `scroll_top` pixels
/// down in a view `height` pixels high; `None` for the rows at the end.
pub fn window(scroll_top: Option<f64>, height: f64, total: usize) -> Range<usize> {
    let height = if height > 0.0 { height } else { UNMEASURED_PX };
    let in_view = (height / ROW_PX).ceil() as usize;
    let first = match scroll_top {
        Some(top) => (top.max(0.0) / ROW_PX).floor() as usize,
        None => total.saturating_sub(in_view),
    };
    let start = first
        .min(total.saturating_sub(in_view))
        .saturating_sub(OVERSCAN);
    let end = (first + in_view + OVERSCAN).min(total);
    start..end.max(start)
}

#[cfg(test)]
mod tests {
    use super::super::describe::GROUPS;
    use super::{Filter, Matches, OVERSCAN, ROW_PX, window};
    use crate::live::log::tests::two_steps;

    /// Nodes named by their ids.
    fn ids(node: &str) -> String {
        node.to_string()
    }

    fn everything() -> Filter {
        Filter {
            groups: GROUPS.iter().map(|(group, _)| *group).collect(),
            node: String::new(),
            text: String::new(),
        }
    }

    #[test]
    fn matches_grow_with_the_log_and_start_over_for_a_new_filter() {
        let full = two_steps();
        let mut log = full.clone();
        log.events.truncate(5);
        let mut matches = Matches::default();
        matches.update(&log, &everything(), &ids);
        assert_eq!(matches.len(), 5);

        log.events = full.events.clone();
        matches.update(&log, &everything(), &ids);
        assert_eq!(matches.len(), full.events.len());
        assert_eq!(matches.positions(0..3), &[0, 1, 2]);

        let only_b = Filter {
            node: "b".into(),
            ..everything()
        };
        matches.update(&log, &only_b, &ids);
        // b's start, retry, second start and success.
        assert_eq!(matches.positions(0..usize::MAX), &[7, 8, 9, 10]);

        assert_eq!(matches.find(|at| at > 8), Some(2));
        assert_eq!(matches.find(|at| at > 10), None);

        let retries = Filter {
            text: "flaky".into(),
            ..everything()
        };
        matches.update(&log, &retries, &ids);
        assert_eq!(matches.positions(0..usize::MAX), &[8]);
    }

    #[test]
    fn a_reset_log_is_filtered_again() {
        let log = two_steps();
        let mut matches = Matches::default();
        matches.update(&log, &everything(), &ids);
        let mut shorter = log.clone();
        shorter.events.truncate(2);
        matches.update(&shorter, &everything(), &ids);
        assert_eq!(matches.len(), 2);
        let mut other = log.clone();
        other.run_id = Some("run-2".into());
        other.events.truncate(3);
        matches.update(&other, &everything(), &ids);
        assert_eq!(matches.len(), 3);
    }

    #[test]
    fn the_window_covers_the_view_and_a_margin_and_never_overruns() {
        let height = 10.0 * ROW_PX;
        // Scrolled 100 rows down a list of 10,000.
        let rows = window(Some(100.0 * ROW_PX), height, 10_000);
        assert_eq!(rows, 100 - OVERSCAN..110 + OVERSCAN);
        // Following the end.
        let rows = window(None, height, 10_000);
        assert_eq!(rows, 9_990 - OVERSCAN..10_000);
        // A short list is drawn whole.
        assert_eq!(window(None, height, 4), 0..4);
        assert_eq!(window(Some(0.0), height, 0), 0..0);
        // A stale scroll position past the end (the filter narrowed).
        let rows = window(Some(5_000.0 * ROW_PX), height, 30);
        assert_eq!(rows, 20 - OVERSCAN..30);
    }
}
