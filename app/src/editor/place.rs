//! Adding a node: the kinds a search matches (the palette's filter and
//! double-click's quick add share it) and placing one on the canvas.

use std::collections::BTreeSet;

use heddle_engine::EdgeId;
use heddle_engine::format::Position;
use heddle_engine::kinds::BuiltinKind;
use leptos::prelude::*;

use super::state::Editor;
use super::{model, splice};

/// Adds a node of `kind` at `at` and selects it.
pub fn place(editor: Editor, kind: &str, at: Position) {
    place_into(editor, kind, at, None);
}

/// Adds a node of `kind` at `at`, put into edge `into` when one is given
/// (see [`splice`]), in one undo step, and selects it.
pub fn place_into(editor: Editor, kind: &str, at: Position, into: Option<EdgeId>) {
    let mut placed = None;
    editor.change(|document| {
        let node = model::new_node(document, kind, at);
        let id = node.id.clone();
        document.nodes.push(node);
        if let Some(edge) = &into {
            splice::splice(document, edge, &id);
        }
        placed = Some(id);
    });
    if let Some(id) = placed {
        editor.selected.set(BTreeSet::from([id]));
        editor.selected_edge.set(None);
    }
}

/// The kinds matching `query`: names that are the query first, then names
/// that start with it, then names that contain it, then kinds whose
/// summary mentions it; palette order within each.
pub fn matching(query: &str) -> Vec<BuiltinKind> {
    let query = query.trim().to_lowercase();
    let rank = |kind: &BuiltinKind| {
        let name = kind.name();
        if query.is_empty() || name == query {
            Some(0)
        } else if name.starts_with(&query) {
            Some(1)
        } else if name.contains(&query) {
            Some(2)
        } else if kind.summary().to_lowercase().contains(&query) {
            Some(3)
        } else {
            None
        }
    };
    let mut kinds: Vec<(u8, BuiltinKind)> = BuiltinKind::ALL
        .into_iter()
        .filter_map(|kind| rank(&kind).map(|rank| (rank, kind)))
        .collect();
    kinds.sort_by_key(|(rank, _)| *rank);
    kinds.into_iter().map(|(_, kind)| kind).collect()
}
