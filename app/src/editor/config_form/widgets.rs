//! The form's widgets, one per [`Shape`]: each reads its value from the
//! node's config at its path and writes it back through the editor, so
//! undo, autosave and validation see every change the same way.

use heddle_engine::node::FieldHint;
use leptos::html;
use leptos::prelude::*;
use serde_json::{Map, Value};

use super::path::{self, Path, Step};
use super::shape::{Field, Shape, Variant};
use super::{FormCx, completion};
use crate::components::CodeSpans;
use crate::editor::condition::condition_problem;

/// One labelled field: its title, control, help and problems.
pub fn field(cx: FormCx, parent: Path, field: Field) -> AnyView {
    let path = path::join(&parent, Step::Key(field.key.clone()));
    let id = control_id(cx, &path);
    let Field {
        title,
        help,
        shape,
        required,
        default,
        example,
        ..
    } = field;
    let help = (!help.is_empty())
        .then(|| view! { <span class="field-hint"><CodeSpans text=help /></span> });
    let described = format!("{id}-problems");
    mark_invalid(cx, path.clone(), id.clone(), described.clone());
    let problems =
        view! { <span class="field-problems" id=described>{problems(cx, path.clone())}</span> };
    let grouped = matches!(
        shape,
        Shape::Names(_) | Shape::List(_) | Shape::Map { .. } | Shape::Record(_)
    );
    if shape == Shape::Boolean {
        return view! {
            <div class="field">
                <label class="check">{boolean(cx, path, default, id)}{title}</label>
                {help}
                {problems}
            </div>
        }
        .into_any();
    }
    let mark =
        required.then(|| view! { <span class="field-required" title="Required">" *"</span> });
    let control = control(cx, path, &shape, required, default, example, id.clone());
    if grouped {
        let class = match shape {
            Shape::Names(FieldHint::Tool) => "field form-group tool-picker",
            _ => "field form-group",
        };
        return view! {
            <fieldset class=class>
                <legend class="field-label">{title}{mark}</legend>
                {help}
                {control}
                {problems}
            </fieldset>
        }
        .into_any();
    }
    view! {
        <div class="field">
            <label class="field-label" for=id>{title}{mark}</label>
            {control}
            {help}
            {problems}
        </div>
    }
    .into_any()
}

/// The control for a value of `shape` at `path`.
fn control(
    cx: FormCx,
    path: Path,
    shape: &Shape,
    required: bool,
    default: Option<Value>,
    example: Option<String>,
    id: String,
) -> AnyView {
    match shape {
        Shape::Text(hint) => text(cx, path, *hint, required, default, example, id),
        Shape::Integer | Shape::Number => number(cx, path, shape == &Shape::Integer, default, id),
        Shape::Boolean => boolean(cx, path, default, id).into_any(),
        Shape::Choice(choices) => choice(cx, path, choices.clone(), required, id),
        Shape::Names(hint) => names(cx, path, *hint),
        Shape::List(item) => list(cx, path, (**item).clone()),
        Shape::Record(fields) => fields
            .iter()
            .cloned()
            .map(|sub| field(cx, path.clone(), sub))
            .collect_view()
            .into_any(),
        Shape::Map { key, value } => map(cx, path, *key, (**value).clone()),
        Shape::Variants(variants) => one_of(cx, path, variants.clone(), id),
        Shape::Json => json(cx, path, id),
    }
}

/// A unique element id for the control at `path` of this node.
fn control_id(cx: FormCx, path: &Path) -> String {
    let raw = format!("cfg-{}-{}", cx.node.get_value(), path::name(path));
    raw.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

fn field_name(path: &Path) -> String {
    format!("config.{}", path::name(path))
}

/// Writes `value`; an optional key is removed instead when the value is
/// empty or the default, so configs stay as small as the user's choices.
fn commit(cx: FormCx, path: &Path, value: Option<Value>, default: &Option<Value>, keep: bool) {
    let removable = !keep && matches!(path.last(), Some(Step::Key(_)));
    let empty = match &value {
        None => true,
        Some(Value::String(text)) => text.is_empty(),
        Some(other) => Some(other) == default.as_ref(),
    };
    if removable && empty {
        cx.write(path, None);
    } else if let Some(value) = value {
        cx.write(path, Some(value));
    }
}

fn text(
    cx: FormCx,
    path: Path,
    hint: Option<FieldHint>,
    required: bool,
    default: Option<Value>,
    example: Option<String>,
    id: String,
) -> AnyView {
    let name = field_name(&path);
    // What an empty field shows: its default, else its schema's example.
    let placeholder = default
        .as_ref()
        .and_then(Value::as_str)
        .map(str::to_string)
        .or(example)
        .unwrap_or_default();
    let read_only = cx.read_only;
    let value = {
        let path = path.clone();
        move || cx.text(&path)
    };
    let apply = {
        let path = path.clone();
        let default = default.clone();
        move |text: String| commit(cx, &path, Some(Value::String(text)), &default, required)
    };
    let on_change = {
        let apply = apply.clone();
        move |event: leptos::ev::Event| apply(event_target_value(&event))
    };
    match hint {
        Some(FieldHint::Template) => {
            template(cx, value, apply, id, name, placeholder, read_only)
        }
        Some(FieldHint::Script) => view! {
            <textarea id=id name=name class="mono code" rows="10" spellcheck="false"
                prop:value=value on:change=on_change readonly=read_only></textarea>
        }
        .into_any(),
        Some(FieldHint::Expression) => {
            let error = RwSignal::new(condition_problem(&untrack(&value)));
            view! {
                // Its schema's example (a list for a fan-out's `over`),
                // else a condition's.
                <input id=id name=name class="mono" spellcheck="false"
                    placeholder=if placeholder.is_empty() { "count < 3".to_string() } else { placeholder.clone() }
                    prop:value=value readonly=read_only
                    on:input=move |event| error.set(condition_problem(&event_target_value(&event)))
                    on:change=on_change />
                {move || error.get().map(|error| view! { <span class="field-error" role="alert">{error}</span> })}
            }
            .into_any()
        }
        // One of the node's routes, or a route of its own (a condition's
        // `otherwise` is often one no other route names): typed, with
        // the node's routes offered.
        Some(FieldHint::Route) => {
            let list = format!("{id}-routes");
            let offered = move || {
                cx.names(FieldHint::Route)
                    .into_iter()
                    .map(|route| view! { <option value=route></option> })
                    .collect_view()
            };
            view! {
                <input id=id name=name list=list.clone() placeholder="none" autocomplete="off"
                    prop:value=value readonly=read_only
                    on:change=move |event| apply(event_target_value(&event).trim().to_string()) />
                <datalist id=list>{offered}</datalist>
            }
            .into_any()
        }
        Some(hint @ (FieldHint::Channel | FieldHint::MessagesChannel | FieldHint::Node)) => {
            let default = default.as_ref().and_then(Value::as_str).map(str::to_string);
            pick(cx, path, hint, required, default, id, name)
        }
        Some(hint @ (FieldHint::Model | FieldHint::Credential | FieldHint::Tool)) => {
            let list = match hint {
                FieldHint::Model => "heddle-models",
                FieldHint::Credential => "heddle-secrets",
                _ => "heddle-tools",
            };
            let placeholder = match hint {
                FieldHint::Model => "the server's default",
                FieldHint::Credential => "none",
                _ => "",
            };
            view! {
                <input id=id name=name list=list placeholder=placeholder autocomplete="off"
                    prop:value=value readonly=read_only
                    on:change=move |event| apply(event_target_value(&event).trim().to_string()) />
            }
            .into_any()
        }
        Some(FieldHint::Graph) | None => view! {
            <input id=id name=name placeholder=placeholder prop:value=value readonly=read_only on:change=on_change />
        }
        .into_any(),
    }
}

/// A channel completion on offer in a template: where the typed name
/// starts and the caret is (bytes), the names offered, the one chosen.
#[derive(Clone, Debug, PartialEq)]
struct Offer {
    start: usize,
    caret: usize,
    names: Vec<String>,
    active: usize,
}

/// A template: a text area that offers the graph's channels after `{{`
/// as you type, and a chip per channel that inserts `{{ channel }}` where
/// the caret is.
fn template(
    cx: FormCx,
    value: impl Fn() -> String + Clone + Send + Sync + 'static,
    apply: impl Fn(String) + Clone + Send + Sync + 'static,
    id: String,
    name: String,
    placeholder: String,
    read_only: bool,
) -> AnyView {
    let area = NodeRef::<html::Textarea>::new();
    let offer = RwSignal::new(None::<Offer>);
    // A chip is named for its field too: a form with a system prompt and a
    // prompt has two "Insert {{ messages }}" buttons.
    let field = name
        .strip_prefix("config.")
        .unwrap_or(&name)
        .replace('.', " ");
    let on_change = {
        let apply = apply.clone();
        move |event: leptos::ev::Event| apply(event_target_value(&event))
    };
    let caret_of = move |area: &web_sys::HtmlTextAreaElement, text: &str| {
        area.selection_start()
            .ok()
            .flatten()
            .map_or(text.len(), |at| byte_offset(text, at as usize))
    };
    let on_input = move |_| {
        let Some(area) = area.get() else { return };
        let text = area.value();
        let caret = caret_of(&area, &text);
        let next = completion::pending_hole(&text[..caret]).and_then(|(start, typed)| {
            let names = completion::suggestions(&cx.channels(None), typed, 8);
            (!names.is_empty()).then_some(Offer {
                start,
                caret,
                names,
                active: 0,
            })
        });
        offer.set(next);
    };
    let accept = {
        let apply = apply.clone();
        move |choice: usize| {
            let (Some(area), Some(open)) = (area.get(), offer.get_untracked()) else {
                return;
            };
            let Some(name) = open.names.get(choice) else {
                return;
            };
            let text = area.value();
            if open.caret > text.len() || open.start > open.caret {
                offer.set(None);
                return;
            }
            let (next, at) = completion::complete(&text, open.start, open.caret, name);
            area.set_value(&next);
            let at = next[..at].encode_utf16().count() as u32;
            let _ = area.set_selection_range(at, at);
            offer.set(None);
            apply(next);
        }
    };
    let on_keydown = {
        let accept = accept.clone();
        move |event: leptos::ev::KeyboardEvent| {
            let Some(open) = offer.get_untracked() else {
                return;
            };
            let count = open.names.len();
            match event.key().as_str() {
                "ArrowDown" => offer.update(|o| {
                    if let Some(o) = o {
                        o.active = (o.active + 1) % count;
                    }
                }),
                "ArrowUp" => offer.update(|o| {
                    if let Some(o) = o {
                        o.active = (o.active + count - 1) % count;
                    }
                }),
                "Enter" | "Tab" => accept(open.active),
                "Escape" => offer.set(None),
                _ => return,
            }
            event.prevent_default();
            event.stop_propagation();
        }
    };
    let list = move || {
        let open = offer.get()?;
        let accept = accept.clone();
        Some(view! {
            <ul class="template-complete" role="listbox" aria-label="Channels" data-testid="template-complete">
                {open.names.into_iter().enumerate().map(|(i, name)| {
                    let accept = accept.clone();
                    view! {
                        <li role="option" class="mono" aria-selected=(i == open.active).to_string()
                            on:pointerdown=move |event| {
                                // Keep the focus in the text.
                                event.prevent_default();
                                accept(i);
                            }>
                            {name}
                        </li>
                    }
                }).collect_view()}
            </ul>
        })
    };
    let chips = move || {
        let channels = cx.channels(None);
        (!read_only && !channels.is_empty()).then(|| {
            let chips = channels
                .into_iter()
                .map(|channel| {
                    let label = hole_label(&channel);
                    let apply = apply.clone();
                    let insert = move |_| {
                        let Some(area) = area.get() else { return };
                        let text = area.value();
                        let caret = caret_of(&area, &text);
                        let hole = hole_label(&channel);
                        let next = format!("{}{hole}{}", &text[..caret], &text[caret..]);
                        area.set_value(&next);
                        apply(next);
                    };
                    let named = format!("Insert {label} into {field}");
                    view! { <button type="button" class="chip mono" aria-label=named on:click=insert>{label}</button> }
                })
                .collect_view();
            view! {
                <div class="template-chips" aria-label="Insert a channel">
                    <span class="field-hint">"Insert"</span>
                    {chips}
                </div>
            }
        })
    };
    view! {
        <div class="template-field">
            <textarea id=id name=name rows="4" node_ref=area placeholder=placeholder prop:value=value on:change=on_change
                on:input=on_input on:keydown=on_keydown on:blur=move |_| offer.set(None)
                readonly=read_only aria-autocomplete="list"></textarea>
            {list}
        </div>
        {chips}
    }
    .into_any()
}

/// A chip's text: the hole it inserts.
fn hole_label(channel: &str) -> String {
    format!("{{{{ {channel} }}}}")
}

/// The byte offset of UTF-16 offset `at` in `text` (a caret position).
fn byte_offset(text: &str, at: usize) -> usize {
    let mut units = 0;
    for (offset, c) in text.char_indices() {
        if units >= at {
            return offset;
        }
        units += c.len_utf16();
    }
    text.len()
}

/// A pick from the graph's channels or nodes; a name that is not there
/// stays shown, marked missing, until changed. Left unset, it says what
/// the engine then uses (`messages (the default)`), not "(none)".
fn pick(
    cx: FormCx,
    path: Path,
    hint: FieldHint,
    required: bool,
    default: Option<String>,
    id: String,
    name: String,
) -> AnyView {
    let current = {
        let path = path.clone();
        move || cx.text(&path)
    };
    let options = {
        let current = current.clone();
        move || {
            let names = cx.names(hint);
            let now = current();
            let missing = (!now.is_empty() && !names.contains(&now)).then(|| {
                let label = format!("{now} (missing)");
                view! { <option value=now.clone() selected=true>{label}</option> }
            });
            let empty = match (required, &default) {
                (true, _) => "Choose…".to_string(),
                (false, Some(default)) => format!("{default} (the default)"),
                (false, None) => "(none)".to_string(),
            };
            view! {
                <option value="" selected=now.is_empty()>{empty}</option>
                {names
                    .into_iter()
                    .map(|name| {
                        let selected = name == now;
                        let label = name.clone();
                        view! { <option value=name selected=selected>{label}</option> }
                    })
                    .collect_view()}
                {missing}
            }
        }
    };
    view! {
        <select id=id name=name prop:value=current disabled=cx.read_only
            on:change=move |event| {
                let text = event_target_value(&event);
                commit(cx, &path, Some(Value::String(text)), &None, required);
            }>
            {options}
        </select>
    }
    .into_any()
}

fn number(cx: FormCx, path: Path, integer: bool, default: Option<Value>, id: String) -> AnyView {
    let name = field_name(&path);
    let placeholder = default.as_ref().map(Value::to_string).unwrap_or_default();
    let value = {
        let path = path.clone();
        move || {
            cx.read(&path)
                .as_ref()
                .and_then(number_text)
                .unwrap_or_default()
        }
    };
    let apply = move |event: leptos::ev::Event| {
        let text = event_target_value(&event);
        let text = text.trim();
        let value = if text.is_empty() {
            None
        } else if integer {
            text.parse::<i64>().ok().map(Value::from)
        } else {
            text.parse::<f64>().ok().map(Value::from)
        };
        commit(cx, &path, value, &default, false);
    };
    let step = if integer { "1" } else { "any" };
    view! {
        <input id=id name=name type="number" step=step min=integer.then_some("0") placeholder=placeholder
            prop:value=value on:change=apply readonly=cx.read_only />
    }
    .into_any()
}

/// A number as typed: `8`, not JSON's `8.0` for a float that is whole.
fn number_text(value: &Value) -> Option<String> {
    match (value.as_i64(), value.as_f64()) {
        (Some(integer), _) => Some(integer.to_string()),
        (None, Some(float)) => Some(float.to_string()),
        (None, None) => None,
    }
}

fn boolean(cx: FormCx, path: Path, default: Option<Value>, id: String) -> impl IntoView {
    let name = field_name(&path);
    let checked = {
        let path = path.clone();
        let default = default.clone();
        move || {
            cx.read(&path)
                .or_else(|| default.clone())
                .and_then(|value| value.as_bool())
                .unwrap_or(false)
        }
    };
    view! {
        <input id=id name=name type="checkbox" prop:checked=checked disabled=cx.read_only
            on:change=move |event| {
                let on = event_target_checked(&event);
                commit(cx, &path, Some(Value::Bool(on)), &default.clone().or(Some(Value::Bool(false))), false);
            } />
    }
}

fn choice(cx: FormCx, path: Path, choices: Vec<String>, required: bool, id: String) -> AnyView {
    let name = field_name(&path);
    let current = {
        let path = path.clone();
        move || cx.text(&path)
    };
    let options = {
        let current = current.clone();
        move || {
            let now = current();
            choices
                .iter()
                .map(|choice| {
                    let selected = *choice == now;
                    view! { <option value=choice.clone() selected=selected>{choice.clone()}</option> }
                })
                .collect_view()
        }
    };
    view! {
        <select id=id name=name prop:value=current disabled=cx.read_only
            on:change=move |event| commit(cx, &path, Some(Value::String(event_target_value(&event))), &None, required)>
            {(!required).then(|| view! { <option value="">"(none)"</option> })}
            {options}
        </select>
    }
    .into_any()
}

/// Names of one sort, ticked on and off: the server's tools, the graph's
/// channels. A name the list does not offer stays, ticked, until unticked.
fn names(cx: FormCx, path: Path, hint: FieldHint) -> AnyView {
    let bound = {
        let path = path.clone();
        move || -> Vec<String> {
            cx.read(&path)
                .and_then(|value| {
                    value.as_array().map(|list| {
                        list.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                })
                .unwrap_or_default()
        }
    };
    let empty = match hint {
        FieldHint::Tool => "This server offers no tools.",
        FieldHint::Channel | FieldHint::MessagesChannel => {
            "The graph has no channels yet: add them in the graph's settings (click the canvas)."
        }
        _ => "Nothing to choose from.",
    };
    let rows = move || {
        let on = bound();
        let mut choices = cx.names(hint);
        for name in &on {
            if !choices.contains(name) {
                choices.push(name.clone());
            }
        }
        if choices.is_empty() {
            return view! { <span class="field-hint">{empty}</span> }.into_any();
        }
        choices
            .into_iter()
            .map(|name| {
                let checked = on.contains(&name);
                let field = field_name(&path);
                let path = path.clone();
                let item = name.clone();
                let toggle = move |event: leptos::ev::Event| {
                    let wanted = event_target_checked(&event);
                    let mut list: Vec<String> = cx
                        .read_now(&path)
                        .and_then(|value| {
                            value.as_array().map(|list| {
                                list.iter()
                                    .filter_map(Value::as_str)
                                    .map(str::to_string)
                                    .collect()
                            })
                        })
                        .unwrap_or_default();
                    list.retain(|name| *name != item);
                    if wanted {
                        list.push(item.clone());
                    }
                    let value = (!list.is_empty()).then(|| Value::from(list));
                    commit(cx, &path, value, &None, false);
                };
                view! {
                    <label class="check">
                        <input type="checkbox" name=field value=name.clone() prop:checked=checked
                            disabled=cx.read_only on:change=toggle />
                        <span class="mono">{name}</span>
                    </label>
                }
            })
            .collect_view()
            .into_any()
    };
    view! { <div class="names-picker">{rows}</div> }.into_any()
}

/// A new, blank value of `shape`: what "Add" puts in a list.
fn blank(shape: &Shape) -> Value {
    match shape {
        Shape::Text(_) | Shape::Choice(_) => Value::String(String::new()),
        Shape::Integer | Shape::Number => Value::from(0),
        Shape::Boolean => Value::Bool(false),
        Shape::Names(_) | Shape::List(_) => Value::Array(Vec::new()),
        Shape::Record(fields) => Value::Object(
            fields
                .iter()
                .filter(|field| field.required)
                .map(|field| {
                    let value = field.default.clone().unwrap_or_else(|| blank(&field.shape));
                    (field.key.clone(), value)
                })
                .collect(),
        ),
        Shape::Map { .. } => Value::Object(Map::new()),
        Shape::Variants(variants) => variants
            .iter()
            .find(|variant| variant.key != "value")
            .or(variants.first())
            .map(|variant| {
                Value::Object(Map::from_iter([(
                    variant.key.clone(),
                    blank(&variant.shape),
                )]))
            })
            .unwrap_or(Value::Null),
        Shape::Json => Value::Null,
    }
}

/// Rows of one shape, each removable, and a button that adds one.
fn list(cx: FormCx, path: Path, item: Shape) -> AnyView {
    let length = {
        let path = path.clone();
        Memo::new(move |_| {
            cx.read(&path)
                .and_then(|value| value.as_array().map(Vec::len))
                .unwrap_or(0)
        })
    };
    let rows = {
        let path = path.clone();
        let item = item.clone();
        move || {
            (0..length.get())
                .map(|i| {
                    let row = path::join(&path, Step::Index(i));
                    let id = control_id(cx, &row);
                    let inner = control(cx, row.clone(), &item, true, None, None, id);
                    let label = {
                        let row = row.clone();
                        move || match cx.read(&row).as_ref().and_then(row_name) {
                            Some(name) => format!("Remove {name}"),
                            None => format!("Remove item {}", i + 1),
                        }
                    };
                    removable_row(cx, row, label, inner)
                })
                .collect_view()
        }
    };
    let add = move || {
        let at = path::join(&path, Step::Index(length.get_untracked()));
        cx.write(&at, Some(blank(&item)));
    };
    rows_with_add(cx, rows, add)
}

/// One row of a list or map: its controls and a button that removes the
/// value at `row`, named by what the row holds ("Remove route billing")
/// so a screen reader's list of buttons says which is which.
fn removable_row(
    cx: FormCx,
    row: Path,
    label: impl Fn() -> String + Send + Sync + 'static,
    body: AnyView,
) -> AnyView {
    let remove = move |_| cx.write(&row, None);
    view! {
        <div class="form-row">
            <div class="form-row-body">{body}</div>
            {(!cx.read_only).then(|| view! {
                <button type="button" class="icon-button form-row-remove" title="Remove"
                    aria-label=label on:click=remove>"×"</button>
            })}
        </div>
    }
    .into_any()
}

/// What a row of a list is called: a text row its text; a record its
/// naming field with its key ("route billing"); nothing for an empty or
/// nameless row.
fn row_name(value: &Value) -> Option<String> {
    let text = |value: &Value| {
        value
            .as_str()
            .map(str::trim)
            .filter(|text| !text.is_empty())
            .map(str::to_string)
    };
    match value {
        Value::Object(fields) => {
            ["route", "name", "channel", "tool", "id"]
                .iter()
                .find_map(|key| {
                    fields
                        .get(*key)
                        .and_then(text)
                        .map(|name| format!("{key} {name}"))
                })
        }
        other => text(other),
    }
}

/// The rows, and the button that adds one (not for viewers). The row
/// added takes the focus (its first field), so one types into it at once.
/// Enter in a filled one-line field goes on as a list does: to the next
/// row's first field, or from the last row to a new one ("billing" Enter
/// "refunds" Enter).
fn rows_with_add(
    cx: FormCx,
    rows: impl IntoView + 'static,
    add: impl Fn() + Send + Sync + 'static,
) -> AnyView {
    let list = NodeRef::<html::Div>::new();
    let add = StoredValue::new(add);
    let add = move || {
        let before = row_count(list);
        add.with_value(|add| add());
        focus_new_row(list, before);
    };
    let on_enter = move |event: leptos::ev::KeyboardEvent| {
        if cx.read_only
            || event.key() != "Enter"
            || event.is_composing()
            || event.shift_key()
            || event.ctrl_key()
            || event.meta_key()
            || event.alt_key()
        {
            return;
        }
        let Some(list) = list.get_untracked() else {
            return;
        };
        match enter_in_row(&event, &list) {
            EnterGoes::Nowhere => return,
            EnterGoes::To(field) => {
                let _ = field.focus();
            }
            EnterGoes::Out(remove) => {
                // The blank row goes, and the focus to "+ Add" after the list.
                let add_button = list.next_element_sibling().and_then(|next| {
                    wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(next).ok()
                });
                remove.click();
                if let Some(button) = add_button {
                    let _ = button.focus();
                }
            }
            EnterGoes::NewRow(field) => {
                // Applies what was typed (fields apply as they are left)
                // before the new row is written after it.
                let _ = field.blur();
                add();
            }
        }
        event.prevent_default();
        event.stop_propagation();
    };
    view! {
        <div class="form-rows" node_ref=list on:keydown=on_enter>{rows}</div>
        // The press keeps the focus where it is: leaving a field applies
        // it, and what that draws (a warning above, say) moved the button
        // from under the pointer before the release, so the click was
        // lost. The field is applied as the click lands instead.
        {(!cx.read_only).then(|| view! {
            <button type="button" class="button button-small"
                on:mousedown=|event| event.prevent_default()
                on:click=move |_| {
                    blur_focused();
                    add();
                }>"+ Add"</button>
        })}
    }
    .into_any()
}

/// Takes the focus from the field that has it, which applies what was
/// typed there.
fn blur_focused() {
    use wasm_bindgen::JsCast;
    if let Some(field) = document()
        .active_element()
        .and_then(|element| element.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = field.blur();
    }
}

/// How many rows `list` shows now.
fn row_count(list: NodeRef<html::Div>) -> u32 {
    list.try_get_untracked()
        .flatten()
        .map_or(0, |list| list.child_element_count())
}

/// Focuses the first field of the row added after `before` rows, as soon
/// as it is drawn. Rows are drawn in microtasks, so it is looked for there
/// (the browser handles no key until they have run): a fast typist's next
/// letters ("billing" Enter "refunds") land in the new row, never on the
/// page while it waits for a frame.
fn focus_new_row(list: NodeRef<html::Div>, before: u32) {
    let focus = move || -> bool {
        if row_count(list) <= before {
            return false;
        }
        let field = list.try_get_untracked().flatten().and_then(|list| {
            list.query_selector(&format!(".form-row:last-child {FIELD}"))
                .ok()
                .flatten()
        });
        if let Some(field) = field
            && let Ok(field) = wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(field)
        {
            let _ = field.focus();
        }
        true
    };
    #[cfg(feature = "hydrate")]
    leptos::task::spawn_local(async move {
        for _ in 0..32 {
            if focus() {
                return;
            }
            let next = js_sys::Promise::resolve(&wasm_bindgen::JsValue::UNDEFINED);
            let _ = wasm_bindgen_futures::JsFuture::from(next).await;
        }
        // Not drawn within the microtasks (it should be): the next frame.
        request_animation_frame(move || {
            focus();
        });
    });
    #[cfg(not(feature = "hydrate"))]
    request_animation_frame(move || {
        focus();
    });
}

/// Where Enter in a list's field goes.
enum EnterGoes {
    /// Not for the list: a text area's new line, an empty field, a row of
    /// a list inside this one.
    Nowhere,
    /// The next row's first field.
    To(web_sys::HtmlElement),
    /// A new row after the last, this field applied first.
    NewRow(web_sys::HtmlElement),
    /// Out of the list: the last row is blank (Enter on it, as in a
    /// bulleted list), and goes with its remove button.
    Out(web_sys::HtmlElement),
}

fn enter_in_row(event: &leptos::ev::KeyboardEvent, list: &web_sys::HtmlDivElement) -> EnterGoes {
    use wasm_bindgen::JsCast;
    let Some(input) = event
        .target()
        .and_then(|target| target.dyn_into::<web_sys::HtmlInputElement>().ok())
    else {
        return EnterGoes::Nowhere;
    };
    let one_line = matches!(input.type_().as_str(), "text" | "search" | "");
    let Some(row) = input.closest(".form-row").ok().flatten() else {
        return EnterGoes::Nowhere;
    };
    let ours = row
        .parent_element()
        .is_some_and(|parent| parent.is_same_node(Some(list)));
    if !one_line || !ours {
        return EnterGoes::Nowhere;
    }
    if input.value().trim().is_empty() {
        let last = row.next_element_sibling().is_none();
        let remove = row
            .query_selector(":scope > .form-row-remove")
            .ok()
            .flatten()
            .and_then(|button| button.dyn_into::<web_sys::HtmlElement>().ok());
        return match remove {
            Some(remove) if last && blank_row(&row) => EnterGoes::Out(remove),
            _ => EnterGoes::Nowhere,
        };
    }
    match row.next_element_sibling() {
        Some(next) => next
            .query_selector(FIELD)
            .ok()
            .flatten()
            .and_then(|field| field.dyn_into::<web_sys::HtmlElement>().ok())
            .map_or(EnterGoes::Nowhere, EnterGoes::To),
        None => EnterGoes::NewRow(input.unchecked_into()),
    }
}

/// Whether nothing is typed in any of a row's text fields.
fn blank_row(row: &web_sys::Element) -> bool {
    use wasm_bindgen::JsCast;
    let Ok(fields) = row.query_selector_all("input:not([type=hidden]), textarea") else {
        return false;
    };
    (0..fields.length())
        .filter_map(|at| fields.item(at))
        .all(|field| {
            let value = match field.dyn_ref::<web_sys::HtmlInputElement>() {
                Some(input) => input.value(),
                None => field
                    .dyn_ref::<web_sys::HtmlTextAreaElement>()
                    .map(|area| area.value())
                    .unwrap_or_default(),
            };
            value.trim().is_empty()
        })
}

/// A row's fields, the first of which takes the focus.
const FIELD: &str = ":is(input:not([type=hidden]), select, textarea)";

/// An object used as a map: a row per key (picked from the channels when
/// the keys are channels) with its value's control.
fn map(cx: FormCx, path: Path, key: Option<FieldHint>, value: Shape) -> AnyView {
    let keys = {
        let path = path.clone();
        Memo::new(move |_| {
            cx.read(&path)
                .and_then(|value| {
                    value
                        .as_object()
                        .map(|map| map.keys().cloned().collect::<Vec<_>>())
                })
                .unwrap_or_default()
        })
    };
    // Read by the handlers below, so untracked.
    let entries = {
        let path = path.clone();
        move || {
            cx.read_now(&path)
                .and_then(|value| value.as_object().cloned())
                .unwrap_or_default()
        }
    };
    let rename = {
        let path = path.clone();
        let entries = entries.clone();
        move |from: String, to: String| {
            let to = to.trim().to_string();
            let mut map = entries();
            if to.is_empty() || to == from || map.contains_key(&to) {
                return;
            }
            // Keep the key's place: rebuild in order with the new name.
            map = map
                .into_iter()
                .map(|(k, v)| if k == from { (to.clone(), v) } else { (k, v) })
                .collect();
            cx.write(&path, Some(Value::Object(map)));
        }
    };
    let rows = {
        let path = path.clone();
        let value = value.clone();
        move || {
            keys.get()
                .into_iter()
                .map(|name| {
                    let row = path::join(&path, Step::Key(name.clone()));
                    let id = control_id(cx, &row);
                    // The value's control is named by its key, for a
                    // screen reader (the key sits beside it, not in it).
                    let label = view! {
                        <label for=id.clone() class="visually-hidden">{format!("Value of {name}")}</label>
                    };
                    let inner = control(cx, row.clone(), &value, true, None, None, id);
                    let rename = rename.clone();
                    let from = name.clone();
                    let key_control = match key {
                        Some(FieldHint::Channel) => {
                            let channels = cx.names(FieldHint::Channel);
                            let missing = (!channels.contains(&name)).then(|| view! {
                                <option value=name.clone() selected=true>{format!("{name} (missing)")}</option>
                            });
                            view! {
                                <select class="form-key" aria-label="Channel" disabled=cx.read_only
                                    on:change=move |event| rename(from.clone(), event_target_value(&event))>
                                    {channels.into_iter().map(|channel| {
                                        let selected = channel == name;
                                        let label = channel.clone();
                                        view! { <option value=channel selected=selected>{label}</option> }
                                    }).collect_view()}
                                    {missing}
                                </select>
                            }
                            .into_any()
                        }
                        _ => view! {
                            <input class="form-key mono" aria-label="Name" prop:value=name.clone() readonly=cx.read_only
                                on:change=move |event| rename(from.clone(), event_target_value(&event)) />
                        }
                        .into_any(),
                    };
                    let remove_label = format!("Remove {name}");
                    removable_row(cx, row, move || remove_label.clone(), view! { {key_control}{label}{inner} }.into_any())
                })
                .collect_view()
        }
    };
    let add = move || {
        let taken = keys.get_untracked();
        let fresh = match key {
            Some(FieldHint::Channel) => cx.editor.skeleton.with_untracked(|document| {
                document
                    .state
                    .channels
                    .keys()
                    .find(|name| !taken.contains(name))
                    .cloned()
            }),
            _ => None,
        }
        .unwrap_or_else(|| {
            (1..)
                .map(|n| {
                    if n == 1 {
                        "name".to_string()
                    } else {
                        format!("name_{n}")
                    }
                })
                .find(|name| !taken.contains(name))
                .unwrap_or_default()
        });
        cx.write(&path::join(&path, Step::Key(fresh)), Some(blank(&value)));
    };
    rows_with_add(cx, rows, add)
}

/// How a kind of value in [`one_of`] is named.
fn variant_label(key: &str) -> String {
    match key {
        "value" => "A JSON value".to_string(),
        "expr" => "An expression".to_string(),
        "template" => "A template".to_string(),
        other => other.to_string(),
    }
}

/// One of several single-key objects: a select of which, and its value.
fn one_of(cx: FormCx, path: Path, variants: Vec<Variant>, id: String) -> AnyView {
    let current = {
        let path = path.clone();
        Memo::new(move |_| {
            cx.read(&path)
                .and_then(|value| value.as_object().and_then(|map| map.keys().next().cloned()))
        })
    };
    let choose = {
        let path = path.clone();
        let variants = variants.clone();
        move |event: leptos::ev::Event| {
            let key = event_target_value(&event);
            if let Some(variant) = variants.iter().find(|variant| variant.key == key) {
                // The text carries over between an expression and a template.
                let carried = cx
                    .read_now(&path)
                    .and_then(|value| {
                        value
                            .as_object()
                            .and_then(|map| map.values().next().cloned())
                    })
                    .filter(|value| value.is_string() && matches!(variant.shape, Shape::Text(_)));
                let value = carried.unwrap_or_else(|| blank(&variant.shape));
                cx.write(&path, Some(Value::Object(Map::from_iter([(key, value)]))));
            }
        }
    };
    let options = {
        let variants = variants.clone();
        move || {
            let now = current.get();
            variants
                .iter()
                .map(|variant| {
                    let selected = now.as_deref() == Some(variant.key.as_str());
                    let label = variant_label(&variant.key);
                    view! { <option value=variant.key.clone() title=variant.help.clone() selected=selected>{label}</option> }
                })
                .collect_view()
        }
    };
    let body = move || {
        let key = current.get()?;
        let variant = variants.iter().find(|variant| variant.key == key)?;
        let inner = path::join(&path, Step::Key(key));
        let id = control_id(cx, &inner);
        // The value's control is named by the kind chosen beside it.
        let label = view! { <label for=id.clone() class="visually-hidden">{variant_label(&variant.key)}</label> };
        Some((
            label,
            control(cx, inner, &variant.shape, true, None, None, id),
        ))
    };
    view! {
        <select id=id class="form-variant" aria-label="Kind of value" disabled=cx.read_only on:change=choose>{options}</select>
        {body}
    }
    .into_any()
}

/// Any value as JSON, applied when it reads.
fn json(cx: FormCx, path: Path, id: String) -> AnyView {
    let error = RwSignal::new(None::<String>);
    let name = field_name(&path);
    let text = {
        let path = path.clone();
        move || {
            cx.read(&path)
                .map(|value| serde_json::to_string_pretty(&value).unwrap_or_default())
                .unwrap_or_default()
        }
    };
    let apply = move |event: leptos::ev::Event| {
        let text = event_target_value(&event);
        if text.trim().is_empty() {
            error.set(None);
            commit(cx, &path, None, &None, false);
            return;
        }
        match serde_json::from_str::<Value>(&text) {
            Ok(value) => {
                error.set(None);
                cx.write(&path, Some(value));
            }
            Err(problem) => error.set(Some(format!("not JSON: {problem}"))),
        }
    };
    view! {
        <textarea id=id name=name class="mono" rows="3" spellcheck="false" prop:value=text on:change=apply readonly=cx.read_only></textarea>
        {move || error.get().map(|error| view! { <span class="field-error" role="alert">{error}</span> })}
    }
    .into_any()
}

/// The whole config as JSON: checked as it is typed, applied when it reads.
pub fn json_config(cx: FormCx) -> AnyView {
    let error = RwSignal::new(None::<String>);
    let check = |text: &str| match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(_)) => Ok(()),
        Ok(_) => Err("the config must be a JSON object".to_string()),
        Err(problem) => Err(format!("not JSON: {problem}")),
    };
    let text = move || {
        cx.spec
            .with(|spec| serde_json::to_string_pretty(&spec.config).unwrap_or_default())
    };
    let apply = move |event: leptos::ev::Event| {
        let text = event_target_value(&event);
        match check(&text)
            .and_then(|()| serde_json::from_str::<Value>(&text).map_err(|e| e.to_string()))
        {
            Ok(value) => {
                error.set(None);
                cx.write(&Vec::new(), Some(value));
            }
            Err(problem) => error.set(Some(problem)),
        }
    };
    view! {
        <label class="field">
            <span class="field-label">"Config (JSON)"</span>
            <textarea class="mono" name="config" rows="8" spellcheck="false" prop:value=text readonly=cx.read_only
                on:input=move |event| error.set(check(&event_target_value(&event)).err())
                on:change=apply></textarea>
            {move || error.get().map(|error| view! { <span class="field-error" role="alert">{error}</span> })}
        </label>
    }
    .into_any()
}

/// Marks the control whose value has a problem: `aria-invalid`, and the
/// problems as its description, so a screen reader says "invalid" and why
/// as the focus reaches it (the message beside it is an alert, heard only
/// once, when it appears). Done here by the control's id, which every
/// widget gives its control, rather than in each of a dozen widgets.
fn mark_invalid(cx: FormCx, path: Path, id: String, described: String) {
    Effect::new(move |_| {
        let invalid = !cx.problems_at(&path).is_empty();
        let Some(control) = document().get_element_by_id(&id) else {
            return;
        };
        if invalid {
            let _ = control.set_attribute("aria-invalid", "true");
            let _ = control.set_attribute("aria-describedby", &described);
        } else {
            let _ = control.remove_attribute("aria-invalid");
            let _ = control.remove_attribute("aria-describedby");
        }
    });
}

/// The field a fix's button sits under (the first control in its field's
/// wrapper), to give the focus to once the button is gone.
fn field_of(event: &leptos::ev::MouseEvent) -> Option<web_sys::HtmlElement> {
    use wasm_bindgen::JsCast;
    event
        .target()?
        .dyn_into::<web_sys::Element>()
        .ok()?
        .closest(".field")
        .ok()??
        .query_selector("input, select, textarea")
        .ok()??
        .dyn_into::<web_sys::HtmlElement>()
        .ok()
}

/// The validator's problems at `path`, each with its fix when it has one.
/// Those of an empty field are marked: in a row being filled in (a row
/// just added, the focus in it) the stylesheet keeps them back, so nobody
/// is told a field is empty before they could type in it.
fn problems(cx: FormCx, path: Path) -> impl IntoView {
    let empty = {
        let path = path.clone();
        move || {
            cx.read(&path)
                .is_none_or(|value| value.as_str().is_some_and(str::is_empty))
        }
    };
    // Keyed by what each says: a problem still there after an edit keeps
    // its element. Drawn again, its fix button was a new one between the
    // press and the release of a click that first applied the field being
    // typed in (the edit that redraws the problems), and the click was
    // lost; and an alert drawn again is said again.
    view! {
        <For
            each=move || cx.problems_at(&path)
            key=crate::editor::problems::problem_key
            let:problem
        >
            {problem_line(cx, problem, empty.clone())}
        </For>
    }
}

/// One problem under its field: what it says, and its fix as a button.
fn problem_line(
    cx: FormCx,
    problem: heddle_engine::validate::Problem,
    empty: impl Fn() -> bool + Send + Sync + 'static,
) -> impl IntoView {
    let fix = problem.fix.clone().filter(|_| !cx.read_only).map(|fix| {
        let label = cx.editor.named(&fix.label());
        view! {
            <button type="button" class="button button-small fix-button"
                on:click=move |event| {
                    // The button goes with the problem: the focus goes to
                    // the field it was under, not to the page.
                    let field = field_of(&event);
                    let fix = fix.clone();
                    cx.editor.change(|document| fix.apply(document));
                    if let Some(field) = field {
                        request_animation_frame(move || {
                            let _ = field.focus();
                        });
                    }
                }><CodeSpans text=label /></button>
        }
    });
    // An error is said as it comes; a warning (the run goes on) is read
    // with its field, never interrupting the typing.
    let warning = problem.severity == heddle_engine::validate::Severity::Warning;
    let message = cx.editor.named(&problem.message);
    view! {
        <span class="field-error" class:field-warning=warning class:while-empty=empty
            // The words one flex item: their text and code pieces were
            // each one, and wrapped apart ("has no `otherwise`" / ": a
            // reply that…").
            role=(!warning).then_some("alert")><span><CodeSpans text=message /></span>{fix}</span>
    }
}

#[cfg(test)]
mod tests {
    use super::{byte_offset, number_text};
    use serde_json::json;

    #[test]
    fn a_row_is_named_by_what_it_holds() {
        use super::row_name;
        assert_eq!(
            row_name(&json!({"description": "money", "route": "billing"})).as_deref(),
            Some("route billing")
        );
        assert_eq!(row_name(&json!(" search ")).as_deref(), Some("search"));
        assert_eq!(row_name(&json!({"route": "  "})), None);
        assert_eq!(row_name(&json!(3)), None);
    }

    #[test]
    fn a_caret_in_utf16_units_lands_on_the_right_byte() {
        assert_eq!(byte_offset("abc", 1), 1);
        assert_eq!(byte_offset("héllo", 2), 3);
        assert_eq!(byte_offset("😀x", 2), 4);
        assert_eq!(byte_offset("ab", 9), 2);
    }

    #[test]
    fn a_number_reads_as_it_was_typed() {
        assert_eq!(number_text(&json!(8.0)).as_deref(), Some("8"));
        assert_eq!(number_text(&json!(0.7)).as_deref(), Some("0.7"));
        assert_eq!(number_text(&json!(-3)).as_deref(), Some("-3"));
        assert_eq!(number_text(&json!("8")), None);
    }
}
