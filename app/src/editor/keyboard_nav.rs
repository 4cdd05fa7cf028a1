//! Moving around the canvas from the keyboard: which node an arrow key
//! goes to from the focused one (the nearest in that direction, a step
//! straight ahead preferred to one off to the side), and how far Alt with
//! an arrow moves a node.

use heddle_engine::NodeId;
use heddle_engine::format::Position;

/// How far Alt + an arrow moves the focused node (world pixels).
pub const NUDGE: f64 = 20.0;

/// A direction an arrow key names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Left,
    Right,
    Up,
    Down,
}

impl Direction {
    /// The direction of an arrow key's `key`.
    pub fn of_key(key: &str) -> Option<Direction> {
        match key {
            "ArrowLeft" => Some(Direction::Left),
            "ArrowRight" => Some(Direction::Right),
            "ArrowUp" => Some(Direction::Up),
            "ArrowDown" => Some(Direction::Down),
            _ => None,
        }
    }

    /// One step this way, `by` long.
    pub fn step(self, by: f64) -> (f64, f64) {
        match self {
            Direction::Left => (-by, 0.0),
            Direction::Right => (by, 0.0),
            Direction::Up => (0.0, -by),
            Direction::Down => (0.0, by),
        }
    }
}

/// The node an arrow leads to from `from`: of the nodes ahead in
/// `direction`, the one whose distance ahead plus twice its distance to
/// the side is least. `None` when nothing is that way.
pub fn next_node(
    from: Position,
    direction: Direction,
    nodes: impl IntoIterator<Item = (NodeId, Position)>,
) -> Option<NodeId> {
    nodes
        .into_iter()
        .filter_map(|(id, at)| {
            let (dx, dy) = (at.x - from.x, at.y - from.y);
            let (ahead, aside) = match direction {
                Direction::Right => (dx, dy),
                Direction::Left => (-dx, dy),
                Direction::Down => (dy, dx),
                Direction::Up => (-dy, dx),
            };
            (ahead > 1.0).then_some((ahead + 2.0 * aside.abs(), id))
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, id)| id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(x: f64, y: f64) -> Position {
        Position { x, y }
    }

    fn nodes() -> Vec<(NodeId, Position)> {
        vec![
            (NodeId::from("start"), at(0.0, 0.0)),
            (NodeId::from("llm"), at(260.0, 0.0)),
            (NodeId::from("tools"), at(260.0, 120.0)),
            (NodeId::from("end"), at(520.0, 10.0)),
        ]
    }

    #[test]
    fn arrows_go_to_the_nearest_node_that_way_straight_ahead_first() {
        let go = |from: &str, direction| {
            let here = nodes()
                .into_iter()
                .find(|(id, _)| id.as_str() == from)
                .unwrap()
                .1;
            next_node(here, direction, nodes()).map(|id| id.to_string())
        };
        assert_eq!(go("start", Direction::Right).as_deref(), Some("llm"));
        assert_eq!(go("llm", Direction::Right).as_deref(), Some("end"));
        assert_eq!(go("llm", Direction::Down).as_deref(), Some("tools"));
        assert_eq!(go("tools", Direction::Up).as_deref(), Some("llm"));
        assert_eq!(go("end", Direction::Left).as_deref(), Some("llm"));
        assert_eq!(go("start", Direction::Left), None);
        assert_eq!(go("start", Direction::Up), None);
    }

    #[test]
    fn arrow_keys_name_their_directions() {
        assert_eq!(Direction::of_key("ArrowUp"), Some(Direction::Up));
        assert_eq!(Direction::of_key("a"), None);
        assert_eq!(Direction::Left.step(NUDGE), (-NUDGE, 0.0));
    }
}
