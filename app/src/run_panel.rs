//! The run panel under the canvas: start a run (an input form, or a chat
//! on a thread), answer its pauses, and understand it afterwards (a trace
//! timeline, the event log, the state after every step, another run side
//! by side), with a scrubber that replays any run step by step and a fork
//! that re-runs from a step with an edited state. Everything here reads the
//! watched run's event log ([`Watch`]); nothing keeps a second account of
//! the run.
//!
//! - [`scrubber`]: play, pause, step and speed over a run's steps.
//! - [`start`]: the input form and run-to-node; [`interrupt`]: answer a pause.
//! - [`chat`]: threads and their messages, for graphs whose input is a
//!   conversation.
//! - [`trace`]: a lane per node, a bar per execution; [`events`]: the log
//!   with filters; [`state`]: the state after each step, and [`fork`]
//!   from one; [`compare`]: this run next to another; [`marked`]: JSON
//!   with the lines that differ from another value highlighted;
//!   [`usage`]: tokens and cost, the run's and the graph's;
//!   [`to_dataset`]: a finished run kept as an evaluation example;
//!   [`turns`]: which turn of its conversation a run is, and the others.

pub mod announcer;
pub mod attention;
pub mod chat;
pub mod compare;
pub mod events;
pub mod execution_detail;
pub mod follow_turn;
pub mod fork;
pub mod interrupt;
pub mod marked;
pub mod scrubber;
pub mod start;
pub mod state;
pub mod to_dataset;
pub mod trace;
pub mod turns;
pub mod usage;

use heddle_engine::NodeId;
use heddle_engine::format::ChannelType;
use heddle_engine::ids::RunId;
use leptos::prelude::*;

use crate::editor::state::Editor;
use crate::live::Watch;

/// The panel's tabs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tab {
    Run,
    Chat,
    Trace,
    Events,
    State,
    Compare,
}

impl Tab {
    /// Its tab's element id (the panel is labelled by it).
    fn element_id(self) -> String {
        format!("run-tab-{}", self.label().to_lowercase())
    }

    fn label(self) -> &'static str {
        match self {
            Tab::Run => "Run",
            Tab::Chat => "Chat",
            Tab::Trace => "Trace",
            Tab::Events => "Events",
            Tab::State => "State",
            Tab::Compare => "Compare",
        }
    }
}

/// The panel's own state, shared with the canvas (a node's menu opens the
/// Run tab set to run to that node) and kept across tab switches.
#[derive(Clone, Copy)]
pub struct PanelState {
    pub open: RwSignal<bool>,
    pub tab: RwSignal<Tab>,
    /// What the input form holds, by channel.
    pub texts: RwSignal<std::collections::HashMap<String, String>>,
    /// The node the next run stops before (empty: the end).
    pub stop_before: RwSignal<String>,
    /// Whether the chat shows a conversation (not a new, empty one): until
    /// it does, the panel leaves the canvas most of the room.
    pub talking: RwSignal<bool>,
}

impl PanelState {
    pub fn new() -> PanelState {
        PanelState {
            open: RwSignal::new(false),
            tab: RwSignal::new(Tab::Run),
            texts: RwSignal::new(Default::default()),
            stop_before: RwSignal::new(String::new()),
            talking: RwSignal::new(false),
        }
    }

    /// Opens the Run tab, set to run to `node`.
    pub fn run_to(&self, node: &str) {
        self.stop_before.set(node.to_string());
        self.tab.set(Tab::Run);
        self.open.set(true);
    }
}

impl Default for PanelState {
    fn default() -> Self {
        PanelState::new()
    }
}

/// An input the graph's start node takes: a channel and its type.
#[derive(Clone, Debug, PartialEq)]
pub struct InputField {
    pub channel: String,
    pub ty: ChannelType,
    pub description: String,
}

/// The channels the start node takes as input, in its order.
pub fn input_fields(editor: Editor) -> Vec<InputField> {
    let inputs: Vec<String> = editor.nodes.with(|nodes| {
        nodes
            .iter()
            .find(|node| node.spec.with(|spec| spec.kind == "start"))
            .map(|node| {
                node.spec.with(|spec| {
                    spec.config["inputs"]
                        .as_array()
                        .map(|names| {
                            names
                                .iter()
                                .filter_map(|name| name.as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default()
                })
            })
            .unwrap_or_default()
    });
    editor.skeleton.with(|document| {
        inputs
            .into_iter()
            .map(|channel| {
                let spec = document.state.channels.get(&channel);
                InputField {
                    ty: spec.map_or(ChannelType::Any, |spec| spec.ty),
                    description: spec
                        .map(|spec| spec.description.clone())
                        .unwrap_or_default(),
                    channel,
                }
            })
            .collect()
    })
}

/// The graph's nodes, each as its id and as a person reads it, in the
/// editor's order (for "run to" and "go on with" pickers).
pub fn node_names(editor: Editor) -> Vec<(String, String)> {
    editor.nodes.with(|nodes| {
        nodes
            .iter()
            .map(|node| {
                node.spec
                    .with(|spec| (spec.id.to_string(), option_name(spec)))
            })
            .collect()
    })
}

/// A node in a list of nodes: its label with its id, or its id alone.
fn option_name(spec: &heddle_engine::format::NodeSpec) -> String {
    match spec.name() {
        name if name == spec.id.as_str() => name.to_string(),
        name => format!("{name} ({})", spec.id),
    }
}

/// Selects one node on the canvas (from a trace bar or an event).
pub fn select_node(editor: Editor, node: &str) {
    editor.selected_edge.set(None);
    editor
        .selected
        .set(std::iter::once(NodeId::from(node)).collect());
}

/// A duration for people: `850 µs`, `12 ms`, `1.4 s`, `2 min 5 s`.
pub fn duration(us: u64) -> String {
    match us {
        0..1_000 => format!("{us} µs"),
        1_000..1_000_000 => format!("{} ms", us / 1_000),
        1_000_000..60_000_000 => format!("{:.1} s", us as f64 / 1e6),
        _ => format!("{} min {} s", us / 60_000_000, us / 1_000_000 % 60),
    }
}

/// An id short enough for a picker or a column: eight characters of a run's
/// or thread's own part (`run-0123abcd-…` reads `0123abcd`).
pub fn short_id(id: &str) -> &str {
    let own = ["run-", "thread-"]
        .iter()
        .find_map(|prefix| id.strip_prefix(prefix))
        .unwrap_or(id);
    own.get(..8).unwrap_or(own)
}

/// JSON for reading: pretty, and cut at `limit` characters.
pub fn show_json(value: &serde_json::Value, limit: usize) -> String {
    let text = match value {
        serde_json::Value::String(text) => text.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    };
    if text.chars().count() > limit {
        format!("{}…", text.chars().take(limit).collect::<String>())
    } else {
        text
    }
}

/// The panel: tabs, the scrubber, and the open tab's body.
#[component]
pub fn RunPanel(
    editor: Editor,
    watch: Watch,
    panel: PanelState,
    graph_id: String,
    can_run: bool,
) -> impl IntoView {
    let PanelState {
        open, tab, talking, ..
    } = panel;
    provide_context(turns::PanelTab(tab));
    let chat = Memo::new(move |_| {
        input_fields(editor)
            .iter()
            .any(|field| field.ty == ChannelType::Messages)
    });
    // Closed while there is nothing to show, so the canvas has the room;
    // open for a conversation, and as soon as a run is watched.
    if chat.get_untracked() {
        open.set(true);
        tab.set(Tab::Chat);
    }
    // Unless the person folded it the last time (in this browser).
    crate::editor::layout_memory::remember_chat_folded(open, chat);
    // A graph that comes to hold a conversation as it is built (a model
    // added after its start) shows its chat where the Run tab was, and
    // the Run tab again when it no longer does.
    Effect::new(move |was: Option<bool>| {
        let now = chat.get();
        match (was, now, tab.get_untracked()) {
            (Some(false), true, Tab::Run) => tab.set(Tab::Chat),
            (Some(true), false, Tab::Chat) => tab.set(Tab::Run),
            _ => {}
        }
        now
    });
    let section = NodeRef::<leptos::html::Section>::new();
    // The chat yields to the canvas while the person works on the graph.
    let on_canvas = attention::on_canvas(section);
    Effect::new(move |shown: Option<Option<RunId>>| {
        let run = watch.log.with(|log| log.run_id.clone());
        if run.is_some() && shown.as_ref() != Some(&run) {
            open.set(true);
            on_canvas.set(false);
        }
        run
    });
    // A pause opens the form that answers it.
    Effect::new(move |_| {
        let paused = watch.view.with(|view| !view.interrupts.is_empty());
        if paused && watch.cursor.get_untracked().is_none() && can_run {
            tab.set(if chat.get_untracked() {
                Tab::Chat
            } else {
                Tab::Run
            });
            open.set(true);
            on_canvas.set(false);
        }
    });
    let tabs = move || {
        let mut tabs = vec![Tab::Run];
        if chat.get() {
            tabs.insert(0, Tab::Chat);
        }
        tabs.extend([Tab::Trace, Tab::Events, Tab::State, Tab::Compare]);
        tabs
    };
    let event_count = move || watch.log.with(|log| log.events.len());
    // The tab shown, if any: a memo, so setting the same tab or opening an
    // open panel does not draw the tab again (and lose its scroll).
    let shown = Memo::new(move |_| open.get().then(|| tab.get()));
    let body = {
        let graph_id = graph_id.clone();
        move || {
            use leptos::either::EitherOf6;
            let shown = shown.get()?;
            let graph_id = graph_id.clone();
            // One variant per tab: another tab is drawn anew. Type-erased
            // components (`erase_components`) are all one type, and would
            // be rebuilt in place, each element taking over the one where
            // it stands: the event list's scroller, scrolled to its end,
            // became the state's, which opened scrolled down.
            Some(match shown {
                Tab::Run => {
                    EitherOf6::A(view! { <start::RunTab editor watch panel graph_id can_run /> })
                }
                Tab::Chat => {
                    EitherOf6::B(view! { <chat::ChatTab editor watch graph_id can_run talking /> })
                }
                Tab::Trace => EitherOf6::C(view! { <trace::Timeline editor watch /> }),
                Tab::Events => EitherOf6::D(view! { <events::EventLog editor watch /> }),
                Tab::State => EitherOf6::E(view! { <state::StateTab editor watch can_run /> }),
                Tab::Compare => EitherOf6::F(view! { <compare::CompareTab watch graph_id /> }),
            })
        }
    };
    // Its height, once dragged by its top edge (or moved with the arrow keys).
    let height = RwSignal::new(None::<f64>);
    crate::editor::layout_memory::remember_height(height);
    // A height remembered from a taller window still leaves the canvas
    // its room.
    let style = move || {
        height
            .get()
            .filter(|_| open.get())
            .map(|px| format!("height: min({px:.0}px, calc(100% - 160px))"))
    };
    view! {
        // The height belongs to the graph, not the tab: a chat graph's panel
        // is a conversation's whichever tab shows, so going from the chat to
        // the trace and back moves nothing on the stage.
        <section class="run-panel" class:open=move || open.get() class:chatting=move || chat.get()
            class:chat-idle=move || chat.get() && !talking.get()
            class:yielding=move || chat.get() && tab.get() == Tab::Chat && on_canvas.get()
            aria-label="Run" data-testid="run-panel"
            data-events=event_count node_ref=section style=style>
            {move || open.get().then(|| view! { <PanelGrip section height /> })}
            <div class="run-panel-bar">
                <div class="run-tabs" role="tablist" aria-label="Run panel"
                    on:keydown=move |event| arrows(&event, &tabs(), tab, open)>
                    <For each=tabs key=|tab| *tab let:item>
                        <button
                            type="button"
                            role="tab"
                            class="run-tab"
                            id=item.element_id()
                            aria-controls="run-panel-body"
                            // One Tab stop for the row: the arrows go along it.
                            tabindex=move || if tab.get() == item { "0" } else { "-1" }
                            aria-selected=move || (open.get() && tab.get() == item).to_string()
                            on:click=move |event| {
                                // A click on the tab shown folds the panel; Enter or
                                // Space on it (a click of detail 0) only shows it: the
                                // arrows that reached it have shown it already.
                                let pressed = event.detail() != 0;
                                if pressed && open.get_untracked() && tab.get_untracked() == item {
                                    open.set(false);
                                } else {
                                    tab.set(item);
                                    open.set(true);
                                }
                            }
                        >
                            {item.label()}
                        </button>
                    </For>
                </div>
                <fork::ForkBadge watch />
                <to_dataset::AddToDataset watch graph_id=graph_id.clone() can_run />
                <usage::RunUsage watch />
                <scrubber::Scrubber watch />
                <button
                    type="button"
                    class="tool run-panel-toggle"
                    title=move || if open.get() { "Hide the run panel" } else { "Show the run panel" }
                    aria-label=move || if open.get() { "Hide the run panel" } else { "Show the run panel" }
                    aria-expanded=move || open.get().to_string()
                    on:click=move |_| open.update(|open| *open = !*open)
                >
                    {move || if open.get() { "▾" } else { "▴" }}
                </button>
            </div>
            <div class="run-panel-body" id="run-panel-body" role="tabpanel"
                aria-labelledby=move || tab.get().element_id()>{body}</div>
        </section>
    }
}

/// The arrow keys along the tabs, as a tab list goes: Left and Right to
/// the one beside (round), Home and End to the first and last; the tab
/// reached is shown and focused.
fn arrows(
    event: &leptos::ev::KeyboardEvent,
    tabs: &[Tab],
    tab: RwSignal<Tab>,
    open: RwSignal<bool>,
) {
    // From the tab that has the focus (the one shown, unless the person
    // put the focus on another).
    let focused = event
        .target()
        .and_then(|target| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(target).ok())
        .map(|element| element.id());
    let Some(at) = tabs
        .iter()
        .position(|t| focused.as_deref() == Some(t.element_id().as_str()))
        .or_else(|| tabs.iter().position(|t| *t == tab.get_untracked()))
    else {
        return;
    };
    let last = tabs.len().saturating_sub(1);
    let next = match event.key().as_str() {
        "ArrowRight" => (at + 1) % tabs.len(),
        "ArrowLeft" => (at + last) % tabs.len(),
        "Home" => 0,
        "End" => last,
        _ => return,
    };
    event.prevent_default();
    tab.set(tabs[next]);
    open.set(true);
    crate::components::focus_first(&format!("#{}", tabs[next].element_id()));
}

/// The least a dragged panel keeps: its bar (two lines in a narrow one)
/// and, in the chat, the picker and the box to type in.
const MIN_HEIGHT: f64 = 180.0;

/// The run panel's top edge: drag it (or focus it and press the arrow
/// keys) to give the panel more or less of the stage.
#[component]
fn PanelGrip(
    section: NodeRef<leptos::html::Section>,
    height: RwSignal<Option<f64>>,
) -> impl IntoView {
    // Where a drag began: the pointer's y and the panel's height then.
    let drag = StoredValue::new(None::<(f64, f64)>);
    let clamp = move |px: f64| {
        let stage = section
            .get_untracked()
            .and_then(|panel| panel.parent_element())
            .map_or(800.0, |stage| stage.get_bounding_client_rect().height());
        px.clamp(MIN_HEIGHT, (stage - 160.0).max(MIN_HEIGHT))
    };
    let current = move || {
        section
            .get_untracked()
            .map_or(300.0, |panel| panel.get_bounding_client_rect().height())
    };
    let down = move |event: leptos::ev::PointerEvent| {
        if event.button() != 0 {
            return;
        }
        event.prevent_default();
        drag.set_value(Some((event.client_y() as f64, current())));
        if let Some(grip) = event
            .current_target()
            .and_then(|target| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(target).ok())
        {
            let _ = grip.set_pointer_capture(event.pointer_id());
        }
    };
    let moved = move |event: leptos::ev::PointerEvent| {
        if let Some((from_y, from_height)) = drag.get_value() {
            height.set(Some(clamp(from_height + from_y - event.client_y() as f64)));
        }
    };
    let up = move |_| drag.set_value(None);
    let keys = move |event: leptos::ev::KeyboardEvent| {
        let step = match event.key().as_str() {
            "ArrowUp" => 24.0,
            "ArrowDown" => -24.0,
            _ => return,
        };
        event.prevent_default();
        height.set(Some(clamp(current() + step)));
    };
    // A focusable separator says where it stands: the panel's height in
    // pixels, as screen readers announce it.
    let now = move || height.get().unwrap_or_else(current).round();
    view! {
        <div class="run-panel-grip" role="separator" aria-orientation="horizontal" tabindex="0"
            aria-label="Resize the run panel" title="Drag to resize (or use the arrow keys)"
            aria-valuemin=MIN_HEIGHT.to_string() aria-valuenow=move || now().to_string()
            aria-valuetext=move || format!("{} pixels tall", now())
            data-testid="run-panel-grip"
            on:pointerdown=down on:pointermove=moved on:pointerup=up on:pointercancel=up on:keydown=keys></div>
    }
}

#[cfg(test)]
mod tests {
    use super::{duration, short_id};

    #[test]
    fn ids_read_by_their_own_part() {
        assert_eq!(short_id("run-0123456789abcdef"), "01234567");
        assert_eq!(short_id("thread-ab12"), "ab12");
        assert_eq!(short_id("6e51abcd-0000"), "6e51abcd");
    }

    #[test]
    fn durations_read_at_their_scale() {
        assert_eq!(duration(850), "850 µs");
        assert_eq!(duration(12_400), "12 ms");
        assert_eq!(duration(1_420_000), "1.4 s");
        assert_eq!(duration(125_000_000), "2 min 5 s");
    }
}
