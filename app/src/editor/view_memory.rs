//! Where the view was left on each graph, remembered in this browser. A
//! graph opened again (a reload, back from the list, the next morning)
//! shows what its person was last looking at, at the zoom they chose,
//! rather than its start framed anew. What is kept is the point in the
//! middle of the canvas and the zoom, so a window of another size still
//! centres the same place.
//!
//! A remembered view that would show none of the graph (nodes deleted or
//! moved since, on another machine) is not used; the graph is framed as
//! it opens. At most [`MOST`] graphs are remembered, the last looked at
//! first.

use serde::{Deserialize, Serialize};

use super::state::Viewport;

/// How many graphs' views are kept.
pub const MOST: usize = 40;

/// Where in the browser's storage.
#[cfg(feature = "hydrate")]
const KEY: &str = "heddle.views";

/// One graph's view: the world point in the middle of the canvas, and
/// the zoom.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Kept {
    pub graph: String,
    pub x: f64,
    pub y: f64,
    pub zoom: f64,
}

/// Every graph's kept view, the last looked at first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Views(Vec<Kept>);

impl Views {
    /// Reads the views from their text: anything unreadable, or not a
    /// place on a canvas, is forgotten.
    pub fn parse(text: &str) -> Views {
        let kept: Vec<Kept> = serde_json::from_str(text).unwrap_or_default();
        Views(
            kept.into_iter()
                .filter(|kept| {
                    kept.x.is_finite()
                        && kept.y.is_finite()
                        && kept.x.abs() < 1e7
                        && kept.y.abs() < 1e7
                        && (Viewport::MIN_ZOOM..=Viewport::MAX_ZOOM).contains(&kept.zoom)
                        && !kept.graph.is_empty()
                        && kept.graph.len() <= 200
                })
                .take(MOST)
                .collect(),
        )
    }

    pub fn to_text(&self) -> String {
        serde_json::to_string(&self.0).unwrap_or_default()
    }

    /// `graph`'s view in a `width` × `height` canvas, when one is kept.
    pub fn of(&self, graph: &str, (width, height): (f64, f64)) -> Option<Viewport> {
        self.0
            .iter()
            .find(|kept| kept.graph == graph)
            .map(|kept| Viewport {
                x: width / 2.0 - kept.x * kept.zoom,
                y: height / 2.0 - kept.y * kept.zoom,
                zoom: kept.zoom,
            })
    }

    /// Keeps `view` (in a `width` × `height` canvas) as `graph`'s, first;
    /// the oldest past [`MOST`] are dropped. False when nothing changed.
    pub fn keep(&mut self, graph: &str, view: Viewport, (width, height): (f64, f64)) -> bool {
        let middle = view.to_world(width / 2.0, height / 2.0);
        let kept = Kept {
            graph: graph.to_owned(),
            // Unrounded: the same window shows exactly the same view.
            x: middle.x,
            y: middle.y,
            zoom: view.zoom,
        };
        if self.0.first() == Some(&kept) {
            return false;
        }
        self.0.retain(|other| other.graph != graph);
        self.0.insert(0, kept);
        self.0.truncate(MOST);
        true
    }

    /// Forgets `graph`'s view (it is framed again as it opens). False
    /// when none was kept.
    pub fn forget(&mut self, graph: &str) -> bool {
        let before = self.0.len();
        self.0.retain(|kept| kept.graph != graph);
        self.0.len() != before
    }
}

#[cfg(feature = "hydrate")]
fn storage() -> Option<web_sys::Storage> {
    leptos::prelude::window().local_storage().ok().flatten()
}

/// Every graph's kept view, as this browser holds them.
#[cfg(feature = "hydrate")]
pub fn load() -> Views {
    storage()
        .and_then(|storage| storage.get_item(KEY).ok().flatten())
        .map(|text| Views::parse(&text))
        .unwrap_or_default()
}

/// Keeps the editor's view for `graph` as it changes, once the canvas
/// has its size: written after the view has rested a moment (a pan is
/// many changes), and at once when the page is hidden or the editor left
/// before then. Only a view someone moved to is kept: one framed (as the
/// graph opened, or by Fit) forgets it, to be framed again for the window
/// of the next visit.
#[cfg(feature = "hydrate")]
pub fn remember(editor: super::state::Editor, gestures: super::gestures::Gestures, graph: String) {
    use std::sync::{Arc, Mutex};

    use leptos::prelude::*;
    // The change not yet written, kept outside the reactive graph so that
    // it can still be written as the editor is torn down.
    let due: Arc<Mutex<Option<Due>>> = Arc::default();
    let graph: Arc<str> = Arc::from(graph);
    let moves = StoredValue::new(0_u64);
    let pending = Arc::clone(&due);
    let written = Arc::clone(&graph);
    Effect::new(move |first: Option<()>| {
        let view = editor.viewport.get();
        if first.is_none() || gestures.seen_size_untracked().is_none() {
            return;
        }
        put(
            &pending,
            Some(Due {
                view,
                framed: editor.still_framed(),
                size: gestures.size(),
            }),
        );
        let this = moves.get_value().wrapping_add(1);
        moves.set_value(this);
        let (pending, graph) = (Arc::clone(&pending), Arc::clone(&written));
        set_timeout(
            move || {
                if moves.try_get_value() == Some(this) {
                    write(&graph, put(&pending, None));
                }
            },
            std::time::Duration::from_millis(300),
        );
    });
    let (hidden_due, hidden_graph) = (Arc::clone(&due), Arc::clone(&graph));
    let hidden = window_event_listener(leptos::ev::pagehide, move |_| {
        write(&hidden_graph, put(&hidden_due, None));
    });
    on_cleanup(move || {
        hidden.remove();
        write(&graph, put(&due, None));
    });
}

/// Puts `new` in `due`, giving back what was there.
#[cfg(feature = "hydrate")]
fn put(due: &std::sync::Mutex<Option<Due>>, new: Option<Due>) -> Option<Due> {
    let mut due = due
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    std::mem::replace(&mut *due, new)
}

/// A view to be written, with what deciding it needs.
#[cfg(feature = "hydrate")]
#[derive(Clone, Copy)]
struct Due {
    view: Viewport,
    /// Whether it is still the view the editor framed.
    framed: bool,
    size: (f64, f64),
}

/// Writes `due` (if any) for `graph`.
#[cfg(feature = "hydrate")]
fn write(graph: &str, due: Option<Due>) {
    let Some(due) = due else {
        return;
    };
    let mut views = load();
    let changed = if due.framed {
        views.forget(graph)
    } else {
        views.keep(graph, due.view, due.size)
    };
    if changed && let Some(storage) = storage() {
        let _ = storage.set_item(KEY, &views.to_text());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_kept_comes_back_centred_on_the_same_place_in_any_canvas() {
        let mut views = Views::default();
        let view = Viewport {
            x: -300.0,
            y: 120.0,
            zoom: 0.5,
        };
        assert!(views.keep("g1", view, (1000.0, 600.0)));
        assert!(!views.keep("g1", view, (1000.0, 600.0)), "nothing new");
        let back = Views::parse(&views.to_text());
        assert_eq!(back, views);
        assert_eq!(back.of("g1", (1000.0, 600.0)), Some(view));
        // A smaller window: the same world point in its middle.
        let smaller = back.of("g1", (600.0, 400.0)).expect("kept");
        let middle = |view: Viewport, (w, h): (f64, f64)| view.to_world(w / 2.0, h / 2.0);
        assert_eq!(
            middle(smaller, (600.0, 400.0)),
            middle(view, (1000.0, 600.0))
        );
        assert_eq!(smaller.zoom, 0.5);
        assert_eq!(back.of("g2", (600.0, 400.0)), None);
    }

    #[test]
    fn the_last_looked_at_come_first_and_the_oldest_are_dropped() {
        let mut views = Views::default();
        let view = Viewport::default();
        for n in 0..MOST + 5 {
            views.keep(&format!("g{n}"), view, (800.0, 600.0));
        }
        assert_eq!(views.0.len(), MOST);
        assert_eq!(views.0[0].graph, format!("g{}", MOST + 4));
        assert!(views.of("g0", (800.0, 600.0)).is_none(), "the oldest went");
        views.keep("g10", view, (800.0, 600.0));
        assert_eq!(views.0[0].graph, "g10");
        assert_eq!(views.0.len(), MOST, "kept once");
    }

    #[test]
    fn nonsense_in_storage_is_forgotten() {
        assert_eq!(Views::parse("not json"), Views::default());
        let text = r#"[{"graph":"a","x":1,"y":2,"zoom":1},
                       {"graph":"b","x":1,"y":2,"zoom":0},
                       {"graph":"c","x":1e300,"y":2,"zoom":1},
                       {"graph":"","x":1,"y":2,"zoom":1},
                       {"graph":"d","x":1,"y":2,"zoom":9}]"#;
        let views = Views::parse(text);
        assert_eq!(views.0.len(), 1);
        assert_eq!(views.0[0].graph, "a");
    }

    #[test]
    fn a_view_that_shows_none_of_the_graph_is_not_used() {
        let view = Viewport {
            x: 0.0,
            y: 0.0,
            zoom: 1.0,
        };
        let size = (800.0, 600.0);
        assert!(view.shows_some_of(Some((100.0, 100.0, 300.0, 200.0)), size));
        assert!(view.shows_some_of(Some((-100.0, -100.0, 10.0, 10.0)), size));
        assert!(!view.shows_some_of(Some((900.0, 100.0, 1200.0, 200.0)), size));
        assert!(!view.shows_some_of(None, size), "an empty graph");
    }

    #[test]
    fn a_graph_framed_again_is_forgotten() {
        let mut views = Views::default();
        views.keep("g1", Viewport::default(), (800.0, 600.0));
        views.keep("g2", Viewport::default(), (800.0, 600.0));
        assert!(views.forget("g1"));
        assert!(!views.forget("g1"));
        assert!(views.of("g1", (800.0, 600.0)).is_none());
        assert!(views.of("g2", (800.0, 600.0)).is_some());
    }
}
