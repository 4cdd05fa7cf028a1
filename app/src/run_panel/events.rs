//! The event log: every event of the run (tokens aside), filtered by what
//! kind it is, which node it concerns (named by its label, its id in the
//! row's tooltip), or text. The list follows the newest
//! events until the person scrolls up; however long the run, only the rows
//! in view are drawn. Clicking one moves the replay to its step and selects
//! its node.

mod describe;
mod listing;

use heddle_engine::ids::RunId;
use leptos::html::Div;
use leptos::prelude::*;

use self::describe::{GROUPS, instance_of, node_of, summary, type_of};
use self::listing::{Filter, Matches, ROW_PX, window};
use super::{duration, select_node};
use crate::editor::state::Editor;
use crate::live::{Watch, step_of};

#[component]
pub fn EventLog(editor: Editor, watch: Watch) -> impl IntoView {
    let shown_groups = RwSignal::new(GROUPS.iter().map(|(group, _)| *group).collect::<Vec<_>>());
    let node = RwSignal::new(String::new());
    let text = RwSignal::new(String::new());
    // How many of the run's numbers are token events, not listed here.
    let unlisted = Memo::new(move |_| {
        watch.log.with(|log| {
            let first = log.events.first().map_or(log.next_seq, |event| event.seq);
            log.next_seq
                .saturating_sub(first)
                .saturating_sub(log.events.len() as u64)
        })
    });
    let nodes = Memo::new(move |_| {
        watch.log.with(|log| {
            let mut nodes: Vec<String> = Vec::new();
            for event in &log.events {
                if let Some(node) = node_of(event)
                    && !nodes.iter().any(|known| known == node)
                {
                    nodes.push(node.to_string());
                }
            }
            nodes
        })
    });

    // Where the list is scrolled: following the end, or at a position.
    let scroller = NodeRef::<Div>::new();
    let following = RwSignal::new(true);
    let scroll_top = RwSignal::new(0.0_f64);
    let height = RwSignal::new(0.0_f64);
    let matches = StoredValue::new(Matches::default());
    let listing = Memo::new(move |_| {
        let filter = Filter {
            groups: shown_groups.get(),
            node: node.get(),
            text: text.get().to_lowercase(),
        };
        let top = (!following.get()).then(|| scroll_top.get());
        let height = height.get();
        watch.log.with(|log| {
            let started = log.started_us().unwrap_or(0);
            matches
                .try_update_value(|matches| {
                    matches.update(log, &filter, &|node| editor.name_of(node));
                    let total = matches.len();
                    let rows = window(top, height, total);
                    let start = rows.start;
                    let rows = matches
                        .positions(rows)
                        .iter()
                        .filter_map(|&at| Some((at, log.events.get(at)?)))
                        .map(|(at, event)| Row {
                            seq: event.seq,
                            offset_us: event.at_us.saturating_sub(started),
                            kind: type_of(event),
                            node: node_of(event).map(str::to_string),
                            instance: instance_of(&log.events, at),
                            step: step_of(event),
                            summary: summary(event, &|node| editor.name_of(node)),
                        })
                        .collect();
                    Listing { total, start, rows }
                })
                .unwrap_or_default()
        })
    });
    let measure = move || {
        if let Some(scroller) = scroller.get_untracked() {
            let (top, seen, full) = (
                f64::from(scroller.scroll_top()),
                f64::from(scroller.client_height()),
                f64::from(scroller.scroll_height()),
            );
            let was = scroll_top.get_untracked();
            height.set(seen);
            scroll_top.set(top);
            // Within half a row of the end counts as at the end. Only the
            // person scrolls up: rows arriving below never stop following.
            if top + seen >= full - ROW_PX / 2.0 {
                following.set(true);
            } else if top < was - 1.0 {
                following.set(false);
            }
        }
    };
    // While following, keep the newest row in view as rows arrive: on the
    // next frame, once the list has its new height.
    Effect::new(move || {
        listing.track();
        #[cfg(feature = "hydrate")]
        if following.get() {
            // The log may be gone by then (another tab opened).
            request_animation_frame(move || {
                if let Some(Some(scroller)) = scroller.try_get_untracked() {
                    scroller.set_scroll_top(scroller.scroll_height());
                    if height.try_get_untracked() == Some(0.0) {
                        let _ = height.try_set(f64::from(scroller.client_height()));
                    }
                }
            });
        }
    });
    // A new run is followed from its start.
    Effect::new(move |shown: Option<Option<RunId>>| {
        let run = watch.log.with(|log| log.run_id.clone());
        if shown.is_some_and(|shown| shown != run) {
            following.set(true);
        }
        run
    });
    // Moving the replay to a step brings its events into view, unless some
    // already are (the person clicked one of them, say).
    Effect::new(move || {
        let Some(step) = watch.cursor.get() else {
            return;
        };
        let Some(scroller) = scroller.get_untracked() else {
            return;
        };
        let (top, seen) = (
            f64::from(scroller.scroll_top()),
            f64::from(scroller.client_height()),
        );
        let in_view = (top / ROW_PX).floor() as usize..((top + seen) / ROW_PX).ceil() as usize;
        let target = watch.log.with_untracked(|log| {
            let of_step = |at: usize| log.events.get(at).and_then(step_of) == Some(step);
            matches.with_value(|matches| {
                let shown = matches.positions(in_view).iter().any(|&at| of_step(at));
                if shown { None } else { matches.find(of_step) }
            })
        });
        if let Some(row) = target {
            let top = row as f64 * ROW_PX;
            following.set(false);
            scroll_top.set(top);
            scroller.set_scroll_top(top as i32);
        }
    });
    let jump_to_end = move |_| {
        following.set(true);
    };

    view! {
        <div class="event-log" data-testid="event-log">
            <div class="event-filters" role="group" aria-label="Filters">
                {GROUPS.map(|(kind, label)| view! {
                    <label class="check">
                        <input type="checkbox"
                            prop:checked=move || shown_groups.with(|groups| groups.contains(&kind))
                            on:change=move |event| {
                                let on = event_target_checked(&event);
                                shown_groups.update(|groups| {
                                    groups.retain(|g| *g != kind);
                                    if on { groups.push(kind); }
                                });
                            } />
                        {label}
                    </label>
                })}
                <select aria-label="Node" data-testid="event-node" on:change=move |event| node.set(event_target_value(&event))>
                    <option value="">"All nodes"</option>
                    <For each=move || nodes.get() key=|node| node.clone() let:item>
                        <option value=item.clone()>{editor.name_of(&item)}</option>
                    </For>
                </select>
                <input type="search" placeholder="Search events" aria-label="Search events"
                    on:input=move |event| text.set(event_target_value(&event)) />
                <span class="event-totals">
                <span class="event-count" data-testid="event-count">
                    {move || format!("{} events", listing.with(|listing| listing.total))}
                </span>
                // The numbers skip the streamed tokens: said, so a gap does
                // not read as events lost.
                {move || (unlisted.get() > 0).then(|| view! {
                    <span class="event-unlisted" data-testid="event-unlisted"
                        title="Each streamed token is an event of its own, numbered with the rest; their text is in the chat and on the nodes.">
                        {format!("numbers skip {} token events", unlisted.get())}
                    </span>
                })}
                </span>
            </div>
            <div class="event-scroll" node_ref=scroller on:scroll=move |_| measure()>
                <ol class="event-rows" data-testid="event-rows"
                    style:height=move || format!("{}px", listing.with(|listing| listing.total) as f64 * ROW_PX)
                    style:padding-top=move || format!("{}px", listing.with(|listing| listing.start) as f64 * ROW_PX)>
                    <For each=move || listing.get().rows key=|row| row.seq let:row>
                        <EventRow editor watch row />
                    </For>
                </ol>
                {move || listing.with(|listing| listing.total == 0).then(|| {
                    let empty = watch.log.with(|log| log.events.is_empty());
                    view! {
                        <p class="empty-note">
                            {if empty { "No events yet." } else { "No event matches these filters." }}
                        </p>
                    }
                })}
            </div>
            {move || (!following.get()).then(|| view! {
                <button type="button" class="button button-small event-jump" data-testid="event-jump"
                    on:click=jump_to_end>"↓ Newest"</button>
            })}
        </div>
    }
}

/// The rows drawn, and where they start among all that match.
#[derive(Clone, Debug, Default, PartialEq)]
struct Listing {
    total: usize,
    start: usize,
    rows: Vec<Row>,
}

/// An event as the log lists it.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    seq: u64,
    offset_us: u64,
    kind: &'static str,
    node: Option<String>,
    /// Which fanned-out instance of the node (its item's position).
    instance: Option<u32>,
    step: Option<u32>,
    summary: String,
}

#[component]
fn EventRow(editor: Editor, watch: Watch, row: Row) -> impl IntoView {
    let Row {
        seq,
        offset_us,
        kind,
        node,
        instance,
        step,
        summary,
    } = row;
    let current = move || step.is_some() && watch.cursor.get() == step;
    let clicked = node.clone();
    let open = move || {
        if let Some(node) = &clicked {
            select_node(editor, node);
        }
        if step.is_some() {
            watch.seek(step);
        }
    };
    let pressed = open.clone();
    view! {
        <li class="event-row" class:current=current data-type=kind tabindex="0"
            on:click=move |_| open()
            on:keydown=move |event| {
                if event.key() == "Enter" {
                    pressed();
                }
            }>
            <span class="event-seq">{seq}</span>
            <span class="event-time">{format!("+{}", duration(offset_us))}</span>
            <span class="event-type">{kind}</span>
            <span class="event-node" title=node.clone()>
                {node.as_deref().map(|node| editor.name_of(node))}
                {instance.map(|i| view! { <span class="event-instance">{format!(" #{}", i + 1)}</span> })}
            </span>
            <span class="event-summary">{summary}</span>
        </li>
    }
}
