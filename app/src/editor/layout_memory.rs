//! The editor's layout, remembered in this browser across graphs and
//! visits: whether the node kinds and the inspector are folded away, and
//! how tall the run panel was dragged. Someone who folds the panels for
//! room at 1024 px should not fold them again on every graph.
//!
//! The page is drawn first as it always is (the server knows nothing of
//! this browser), then the remembered layout is applied once hydrated.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// What is remembered; a part never set stays as the page draws it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Layout {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub palette: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inspector: Option<bool>,
    /// Whether the run panel was last folded away while a conversation's
    /// graph was open: a chat graph opens with its Chat tab unless the
    /// person folded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_folded: Option<bool>,
    /// The run panel's height in pixels, when it was dragged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_height: Option<f64>,
}

/// Where in the browser's storage.
#[cfg(feature = "hydrate")]
const KEY: &str = "heddle.layout";

/// Least and most run panel height kept. A panel dragged shorter than
/// 260 px was made small for a moment's room: opened that short on the
/// next graph, a chat would have no room to read a reply.
const HEIGHTS: std::ops::RangeInclusive<f64> = 260.0..=4000.0;

impl Layout {
    /// Reads the layout from its text: anything unreadable is forgotten.
    pub fn parse(text: &str) -> Layout {
        let mut layout: Layout = serde_json::from_str(text).unwrap_or_default();
        layout.run_height = layout
            .run_height
            .filter(|px| px.is_finite() && HEIGHTS.contains(px));
        layout
    }

    #[cfg(feature = "hydrate")]
    fn load() -> Layout {
        window()
            .local_storage()
            .ok()
            .flatten()
            .and_then(|storage| storage.get_item(KEY).ok().flatten())
            .map(|text| Layout::parse(&text))
            .unwrap_or_default()
    }

    #[cfg(feature = "hydrate")]
    fn save(self) {
        if let (Some(storage), Ok(text)) = (
            window().local_storage().ok().flatten(),
            serde_json::to_string(&self),
        ) {
            let _ = storage.set_item(KEY, &text);
        }
    }
}

/// Applies the remembered state to `shown` (once hydrated), then keeps
/// the memory up to date as it changes. `part` picks the field.
pub fn remember_bool(shown: RwSignal<bool>, part: fn(&mut Layout) -> &mut Option<bool>) {
    #[cfg(feature = "hydrate")]
    Effect::new(move |first: Option<()>| {
        let now = shown.get();
        let mut layout = Layout::load();
        if first.is_none() {
            if let Some(kept) = *part(&mut layout)
                && kept != now
            {
                shown.set(kept);
            }
        } else if *part(&mut layout) != Some(now) {
            *part(&mut layout) = Some(now);
            layout.save();
        }
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = (shown, part);
}

/// The same for a choice a person may never have made (`None`): only a
/// choice made is remembered.
pub fn remember_choice(choice: RwSignal<Option<bool>>, part: fn(&mut Layout) -> &mut Option<bool>) {
    #[cfg(feature = "hydrate")]
    Effect::new(move |first: Option<()>| {
        let now = choice.get();
        let mut layout = Layout::load();
        if first.is_none() {
            let kept = *part(&mut layout);
            if kept.is_some() && kept != now {
                choice.set(kept);
            }
        } else if now.is_some() && *part(&mut layout) != now {
            *part(&mut layout) = now;
            layout.save();
        }
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = (choice, part);
}

/// The run panel of a chat graph: folded when it was last folded on a
/// chat graph (once hydrated), and remembered as it is opened or folded
/// while the graph holds a conversation.
pub fn remember_chat_folded(open: RwSignal<bool>, chat: Memo<bool>) {
    #[cfg(feature = "hydrate")]
    Effect::new(move |first: Option<()>| {
        let open_now = open.get();
        if !chat.get() {
            return;
        }
        let mut layout = Layout::load();
        if first.is_none() {
            if layout.chat_folded == Some(true) && open_now {
                open.set(false);
            }
        } else if layout.chat_folded != Some(!open_now) {
            layout.chat_folded = Some(!open_now);
            layout.save();
        }
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = (open, chat);
}

/// The same for the run panel's dragged height (kept only when it leaves
/// the panel room, see [`HEIGHTS`]).
pub fn remember_height(height: RwSignal<Option<f64>>) {
    #[cfg(feature = "hydrate")]
    Effect::new(move |first: Option<()>| {
        let now = height.get();
        let mut layout = Layout::load();
        if first.is_none() {
            if now.is_none() && layout.run_height.is_some() {
                height.set(layout.run_height);
            }
        } else if now.is_some_and(|px| HEIGHTS.contains(&px)) && layout.run_height != now {
            layout.run_height = now;
            layout.save();
        }
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = height;
}

#[cfg(test)]
mod tests {
    use super::Layout;

    #[test]
    fn a_remembered_layout_reads_back_and_nonsense_is_forgotten() {
        let layout = Layout {
            palette: Some(false),
            inspector: None,
            chat_folded: Some(true),
            run_height: Some(320.0),
        };
        let text = serde_json::to_string(&layout).expect("text");
        assert_eq!(Layout::parse(&text), layout);
        assert_eq!(Layout::parse("not json"), Layout::default());
        assert_eq!(
            Layout::parse(r#"{"run_height": 1e9, "palette": true}"#),
            Layout {
                palette: Some(true),
                ..Layout::default()
            }
        );
        assert_eq!(Layout::parse(r#"{"run_height": -5}"#), Layout::default());
        assert_eq!(Layout::parse(r#"{"run_height": 180}"#), Layout::default());
    }
}
