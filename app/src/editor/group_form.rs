//! The inspector for several selected nodes: how many, and their group.
//! Nodes that are not a group yet can be framed in one (Ctrl+G); a group
//! selected whole (its bar or card pressed) gets its name, Collapse or
//! Expand, Ungroup (Ctrl+Shift+G) and a colour.

use leptos::prelude::*;

use heddle_engine::format::GroupColor;

use super::groups::{self, exactly};
use super::state::Editor;

#[component]
pub fn SelectionForm(editor: Editor, count: usize) -> impl IntoView {
    let group = Memo::new(move |_| editor.selected.with(|selected| exactly(editor, selected)));
    let read_only = !editor.can_edit;
    move || {
        match group.get() {
        Some(group) => {
            let id = group.id.clone();
            let rename = {
                let id = id.clone();
                move |event: leptos::ev::Event| {
                    groups::rename(editor, &id, event_target_value(&event).trim().to_string())
                }
            };
            let toggle = {
                let id = id.clone();
                let collapsed = group.collapsed;
                move |_| groups::set_collapsed(editor, &id, !collapsed)
            };
            let ungroup = move |_| groups::ungroup(editor, &id);
            view! {
                <section class="inspector-section" aria-label="Group">
                    <h2 class="inspector-title">"Group"</h2>
                    <p class="inspector-doc">
                        {format!("Frames {count} nodes. Runs ignore groups: they are for reading the graph.")}
                    </p>
                    <label class="field">
                        <span class="field-label">"Name"</span>
                        <input
                            name="group-label"
                            data-testid="group-label"
                            prop:value=group.label.clone()
                            placeholder="Group"
                            on:change=rename
                            readonly=read_only
                        />
                    </label>
                    <Swatches editor id=group.id.clone() color=group.color read_only />
                    <div class="form-actions">
                        <button class="button" type="button" data-testid="group-toggle" on:click=toggle>
                            {if group.collapsed { "Expand" } else { "Collapse" }}
                        </button>
                        {(!read_only).then(|| view! {
                            <button class="button" type="button" data-testid="ungroup" on:click=ungroup>
                                "Ungroup"
                            </button>
                        })}
                    </div>
                    <p class="field-hint">
                        "Drag its bar to move its nodes together. Collapsed, its nodes are drawn as one card; edges to them end at the card."
                    </p>
                </section>
            }
            .into_any()
        }
        None => view! {
            <section class="inspector-section">
                <h2 class="inspector-title">{format!("{count} nodes selected")}</h2>
                <p class="empty-note">"Drag to move them together; Delete removes them; Ctrl+D duplicates."</p>
                {(!read_only).then(|| view! {
                    <button
                        class="button"
                        type="button"
                        data-testid="group-selection"
                        aria-keyshortcuts="Control+G"
                        on:click=move |_| groups::frame_selection(editor)
                    >
                        "Group them"
                    </button>
                    <p class="field-hint">"A frame around them, with a name, that moves them together and can collapse to one card (Ctrl+G)."</p>
                })}
            </section>
        }
        .into_any(),
    }
    }
}

/// The group's tint: a radio per colour, named for screen readers.
#[component]
fn Swatches(editor: Editor, id: String, color: GroupColor, read_only: bool) -> impl IntoView {
    view! {
        <fieldset class="field group-swatches" data-testid="group-color" disabled=read_only>
            <legend>"Colour"</legend>
            {GroupColor::ALL
                .into_iter()
                .map(|tint| {
                    let id = id.clone();
                    view! {
                        <label class=format!("group-swatch tint-{}", tint.name()) title=tint.name()>
                            <input type="radio" name="group-color" value=tint.name()
                                aria-label=tint.name() checked=tint == color
                                on:change=move |_| groups::set_color(editor, &id, tint) />
                        </label>
                    }
                })
                .collect_view()}
        </fieldset>
    }
}
