//! Where sticky notes go: a new note beside what it is about (over the
//! selected node, else in the middle of the view), never on a node nor on
//! an edge's label (a route it would hide); and
//! after Layout each note goes with the node it was written beside, so a
//! note keeps saying what it said about the node it is next to.

use std::collections::HashMap;

use heddle_engine::NodeId;
use heddle_engine::format::{Note, Position};

use super::model::{NODE_HEIGHT, NODE_WIDTH, NOTE_SIZE};
use super::place::{Area, clear_of, clear_of_areas};

/// Between a note and the node it is placed over.
const ABOVE: f64 = 16.0;

/// A note farther than this from every node is about none: Layout leaves
/// it where it is (moved off the nodes).
const NEAR: f64 = 240.0;

/// Where a new note goes: over the `selected` node (a note about it), else
/// with its middle at `centre` (the view's); moved off the nodes at
/// `taken` and the edges' `labels`.
pub fn new_note_spot(
    taken: &[Position],
    labels: &[Area],
    selected: Option<Position>,
    centre: Position,
) -> Position {
    let (width, height) = NOTE_SIZE;
    let at = match selected {
        Some(node) => Position {
            x: node.x,
            y: node.y - height - ABOVE,
        },
        None => Position {
            x: (centre.x - width / 2.0).round(),
            y: (centre.y - height / 2.0).round(),
        },
    };
    let areas: Vec<Area> = taken
        .iter()
        .map(|node| Area::node(*node))
        .chain(labels.iter().copied())
        .collect();
    clear_of_areas(&areas, at, NOTE_SIZE)
}

/// Moves each note by as much as the node nearest it moved (`before` and
/// `after` a layout), then off any node it would cover.
pub fn carry(
    notes: &mut [Note],
    before: &HashMap<NodeId, Position>,
    after: &HashMap<NodeId, Position>,
) {
    let taken: Vec<Position> = after.values().copied().collect();
    for note in notes {
        let nearest = before
            .iter()
            .map(|(id, at)| (gap(note.position, *at), id))
            .filter(|(gap, _)| *gap <= NEAR)
            .min_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(b.1)));
        if let Some((_, id)) = nearest
            && let (Some(was), Some(now)) = (before.get(id), after.get(id))
        {
            note.position = Position {
                x: note.position.x + now.x - was.x,
                y: note.position.y + now.y - was.y,
            };
        }
        note.position = clear_of(&taken, note.position, NOTE_SIZE);
    }
}

/// The distance between a note at `note` and a node at `node`, edge to
/// edge (0 when they overlap).
fn gap(note: Position, node: Position) -> f64 {
    let (width, height) = NOTE_SIZE;
    let dx = (node.x - (note.x + width))
        .max(note.x - (node.x + NODE_WIDTH))
        .max(0.0);
    let dy = (node.y - (note.y + height))
        .max(note.y - (node.y + NODE_HEIGHT))
        .max(0.0);
    dx.hypot(dy)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(x: f64, y: f64) -> Position {
        Position { x, y }
    }

    fn note(id: &str, position: Position) -> Note {
        Note {
            id: id.into(),
            text: String::new(),
            position,
        }
    }

    fn covers(note: Position, node: Position) -> bool {
        let (width, height) = NOTE_SIZE;
        note.x < node.x + NODE_WIDTH
            && node.x < note.x + width
            && note.y < node.y + NODE_HEIGHT
            && node.y < note.y + height
    }

    #[test]
    fn a_new_note_goes_over_the_selected_node_and_never_on_a_node() {
        let nodes = [at(0.0, 200.0), at(300.0, 200.0)];
        let spot = new_note_spot(&nodes, &[], Some(nodes[1]), at(0.0, 0.0));
        assert_eq!(spot, at(300.0, 200.0 - NOTE_SIZE.1 - ABOVE));
        // Mid-view, where a node is: moved off it, not far.
        let spot = new_note_spot(&nodes, &[], None, at(100.0, 230.0));
        assert!(nodes.iter().all(|node| !covers(spot, *node)), "{spot:?}");
        assert!((spot.y - 170.0).abs() + (spot.x).abs() < 400.0, "{spot:?}");
    }

    #[test]
    fn a_new_note_never_hides_an_edges_label() {
        // A route's label just above the selected node, where its note
        // would go.
        let nodes = [at(300.0, 400.0)];
        let label = Area {
            x: 280.0,
            y: 300.0,
            width: 90.0,
            height: 22.0,
        };
        let spot = new_note_spot(&nodes, &[label], Some(nodes[0]), at(0.0, 0.0));
        let (width, height) = NOTE_SIZE;
        let on_label = spot.x < label.x + label.width
            && label.x < spot.x + width
            && spot.y < label.y + label.height
            && label.y < spot.y + height;
        assert!(!on_label, "{spot:?}");
        assert!(!covers(spot, nodes[0]), "{spot:?}");
        // Still near the node it is about.
        assert!(gap(spot, nodes[0]) < NEAR, "{spot:?}");
    }

    #[test]
    fn layout_carries_a_note_with_the_node_it_is_beside() {
        let (a, b) = (NodeId::from("a"), NodeId::from("b"));
        let before = HashMap::from([(a.clone(), at(0.0, 0.0)), (b.clone(), at(1000.0, 0.0))]);
        let after = HashMap::from([(a.clone(), at(500.0, 300.0)), (b.clone(), at(0.0, 0.0))]);
        let mut notes = vec![
            // Over b, and a lone note far from both.
            note("n1", at(1000.0, -140.0)),
            note("n2", at(3000.0, 3000.0)),
        ];
        carry(&mut notes, &before, &after);
        assert_eq!(notes[0].position, at(0.0, -140.0));
        assert_eq!(notes[1].position, at(3000.0, 3000.0));
        // A note about no node, where a node lands: moved off it.
        let mut lone = vec![note("n3", at(510.0, 310.0))];
        carry(&mut lone, &HashMap::new(), &after);
        assert!(
            after.values().all(|node| !covers(lone[0].position, *node)),
            "{:?}",
            lone[0]
        );
    }
}
