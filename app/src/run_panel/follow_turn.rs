//! The newest turn of a conversation stays in view as it is written: the
//! person's question at the top of the list and the reply growing under
//! it, as the list follows its end — until the reply is longer than the
//! list, when the question stays where it is and the reply is read down
//! from its start (as in ChatGPT or Claude), rather than its first lines
//! and the question scrolling away word by word. A list scrolled up to
//! read something older is left where it is; one scrolled down into the
//! reply is too. Sending a message follows again.

use leptos::prelude::*;

/// An event listener on the list, kept as long as the list.
#[cfg(feature = "hydrate")]
type Listener = wasm_bindgen::closure::Closure<dyn FnMut(web_sys::Event)>;

/// The room left above the question, in pixels.
#[cfg(feature = "hydrate")]
const ABOVE_QUESTION: i32 = 8;

/// The room left above an item the list starts at under the question:
/// less than the gap between two, so none of the question shows.
#[cfg(feature = "hydrate")]
const BETWEEN_ITEMS: i32 = 2;

/// Follows the newest turn of `list` across its size changes. Returns
/// what to call when its content changed (`sent`: the person just sent a
/// message, which follows again however the list was scrolled).
pub fn follow_turn(list: NodeRef<leptos::html::Ol>) -> impl Fn(bool) + Copy {
    // Whether the list follows its newest turn: until the person scrolls
    // up from it. Only the person's own scrolling (the wheel, the keys,
    // a finger or the scroll bar) stops it: the browser moves the list
    // too, as its content shrinks and grows while a reply is swapped for
    // the stored one, and that is no sign the person went elsewhere.
    let following = StoredValue::new(true);
    // A finger or the pointer is down on the list (its scroll bar).
    let holding = StoredValue::new(false);
    let seen = StoredValue::new(0_i32);
    // Where the list was last settled: still there, the person has not
    // scrolled since.
    let settled = StoredValue::new(None::<i32>);
    #[cfg(feature = "hydrate")]
    list.on_load(move |element| {
        use wasm_bindgen::JsCast;
        use wasm_bindgen::closure::Closure;

        let element: web_sys::Element = element.into();
        let stop = move || {
            let _ = following.try_set_value(false);
        };
        let scrolled = {
            let element = element.clone();
            Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| {
                let now = element.scroll_top();
                let was = seen.try_get_value().unwrap_or(now);
                let _ = seen.try_set_value(now);
                // Down to the turn (or into the reply): followed again.
                if now >= anchor(&element) - 4 {
                    let _ = following.try_set_value(true);
                } else if now < was - 2 && holding.try_get_value().unwrap_or(false) {
                    stop();
                }
            })
        };
        let wheeled = Closure::<dyn FnMut(web_sys::Event)>::new(move |event: web_sys::Event| {
            if event
                .dyn_ref::<web_sys::WheelEvent>()
                .is_some_and(|wheel| wheel.delta_y() < 0.0)
            {
                stop();
            }
        });
        let keyed = Closure::<dyn FnMut(web_sys::Event)>::new(move |event: web_sys::Event| {
            if event
                .dyn_ref::<web_sys::KeyboardEvent>()
                .is_some_and(|key| matches!(key.key().as_str(), "ArrowUp" | "PageUp" | "Home"))
            {
                stop();
            }
        });
        let held = Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| {
            let _ = holding.try_set_value(true);
        });
        let let_go = Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| {
            let _ = holding.try_set_value(false);
        });
        let listeners: Vec<(&'static str, Listener)> = vec![
            ("scroll", scrolled),
            ("wheel", wheeled),
            ("keydown", keyed),
            ("pointerdown", held),
            (
                "touchstart",
                Closure::new(move |_: web_sys::Event| {
                    let _ = holding.try_set_value(true);
                }),
            ),
            ("pointerup", let_go),
            (
                "touchend",
                Closure::new(move |_: web_sys::Event| {
                    let _ = holding.try_set_value(false);
                }),
            ),
        ];
        for (name, listener) in &listeners {
            let _ =
                element.add_event_listener_with_callback(name, listener.as_ref().unchecked_ref());
        }
        let resized = {
            let element = element.clone();
            Closure::<dyn FnMut(js_sys::Array)>::new(move |_entries: js_sys::Array| {
                if following.try_get_value().unwrap_or(false) {
                    settle(&element, settled);
                }
            })
        };
        let Ok(observer) = web_sys::ResizeObserver::new(resized.as_ref().unchecked_ref()) else {
            return;
        };
        observer.observe(&element);
        // The closures live as long as the list; all go with it.
        let kept = StoredValue::new_local(Some((observer, resized, listeners, element)));
        on_cleanup(move || {
            if let Some(Some((observer, _, listeners, element))) =
                kept.try_update_value(Option::take)
            {
                observer.disconnect();
                for (name, listener) in &listeners {
                    let _ = element.remove_event_listener_with_callback(
                        name,
                        listener.as_ref().unchecked_ref(),
                    );
                }
            }
        });
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = (list, holding, seen, settled);
    move |sent: bool| {
        if sent {
            let _ = following.try_set_value(true);
        }
        #[cfg(feature = "hydrate")]
        if let Some(Some(list)) = list.try_get_untracked() {
            request_animation_frame(move || {
                if following.try_get_value().unwrap_or(false) {
                    settle(&list, settled);
                }
            });
        }
    }
}

/// Where the list follows to: its end, or higher when that would take
/// the newest question out of sight above; but never so high that the
/// newest message (the reply) shows less than [`LAST_SHOWN`] (or half a
/// short list): a list the chat made small while the graph is worked on
/// keeps its newest lines in sight. Then the list starts at the first
/// item under the question that fits (the route it took, else the
/// reply), never at a sliver of the question's bubble: a cut bubble read
/// as a broken page at 1024×700 with a node's form open.
#[cfg(feature = "hydrate")]
fn anchor(list: &web_sys::Element) -> i32 {
    let height = list.client_height();
    let end = (list.scroll_height() - height).max(0);
    let list_top = list.get_bounding_client_rect().top();
    let top_of = |item: &web_sys::Element| {
        list.scroll_top() + (item.get_bounding_client_rect().top() - list_top) as i32
    };
    let Some(last) = list.last_element_child() else {
        return end;
    };
    let mut item = Some(last.clone());
    while let Some(child) = item {
        if child.class_list().contains("role-user") {
            let question = top_of(&child) - ABOVE_QUESTION;
            let shown = LAST_SHOWN.min(height / 2);
            let newest = top_of(&last) - (height - shown);
            if question >= newest {
                return end.min(question.max(0));
            }
            let mut under = child.next_element_sibling();
            while let Some(item) = under {
                let top = top_of(&item);
                if top >= newest {
                    return end.min((top - BETWEEN_ITEMS).max(0));
                }
                under = item.next_element_sibling();
            }
            return end.min(newest.max(0));
        }
        item = child.previous_element_sibling();
    }
    end
}

/// How much of the newest message the list shows at least, in pixels:
/// some three lines.
#[cfg(feature = "hydrate")]
const LAST_SHOWN: i32 = 64;

/// Scrolls a following list to its anchor: down, or up when the list
/// grew while it stood where it was last settled (the chat no longer
/// yielding to the canvas: the question cut at the top came back whole).
/// A list read further into the reply stays there.
#[cfg(feature = "hydrate")]
fn settle(list: &web_sys::Element, settled: StoredValue<Option<i32>>) {
    let to = anchor(list);
    let now = list.scroll_top();
    let end = (list.scroll_height() - list.client_height()).max(0);
    // Where it was settled, or pulled up from there to the end by the
    // browser as the list grew past it.
    let untouched = settled
        .try_get_value()
        .flatten()
        .is_some_and(|at| at == now || (at > now && now >= end - 1));
    if now < to || (untouched && now > to) {
        list.set_scroll_top(to);
    }
    let _ = settled.try_set_value(Some(list.scroll_top()));
}
