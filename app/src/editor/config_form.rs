//! A node's settings as a form, generated from its kind's config JSON
//! Schema (`BuiltinKind::config_schema`), so a kind added later gets a form
//! without editor code. Each field gets the widget its schema and hint ask
//! for: pickers for channels, models, secrets, tools and nodes; list and
//! map editors; templates with channel chips; expressions and scripts in a
//! code font with the validator's problems under them, each with its
//! one-click fix when there is one. Fields apply when they change (blur or
//! Enter), each change one undo step; the whole config stays editable as
//! JSON under "Advanced".

mod completion;
mod path;
pub(crate) mod shape;
mod widgets;

use heddle_engine::NodeId;
use heddle_engine::format::{ChannelType, NodeSpec};
use heddle_engine::node::FieldHint;
use heddle_engine::validate::Problem;
use leptos::prelude::*;
use serde_json::Value;

use self::path::{Path, Step};
pub use self::shape::{Field, Shape, fields};
use super::idle::when_idle;
use super::route_rename::{follow_route_rename, route_an_open_edge};
use super::state::Editor;

/// The choices the pickers offer, from the server and the user's secrets.
#[derive(Clone, Copy)]
pub struct Choices {
    pub tools: Signal<Vec<String>>,
    pub models: Signal<Vec<String>>,
    pub secrets: Signal<Vec<String>>,
}

/// What every widget of one node's form shares.
#[derive(Clone, Copy)]
pub struct FormCx {
    editor: Editor,
    node: StoredValue<NodeId>,
    spec: RwSignal<NodeSpec>,
    problems: Memo<Vec<Problem>>,
    choices: Choices,
    read_only: bool,
}

impl FormCx {
    /// The value at `path` of the config (tracked).
    fn read(&self, path: &Path) -> Option<Value> {
        self.spec
            .with(|spec| path::get(&spec.config, path).cloned())
    }

    /// The value at `path` of the config now, for a handler (read
    /// without tracking: a handler is no reactive context).
    fn read_now(&self, path: &Path) -> Option<Value> {
        self.spec
            .with_untracked(|spec| path::get(&spec.config, path).cloned())
    }

    /// The text at `path` (empty when absent or not text).
    fn text(&self, path: &Path) -> String {
        self.read(path)
            .and_then(|value| value.as_str().map(str::to_string))
            .unwrap_or_default()
    }

    /// Writes (or with `None` removes) the value at `path`: one undo step.
    /// A route's name (`<list>[i].route`) renamed takes the node's edges
    /// along ([`follow_route_rename`]); one typed new goes to an edge that
    /// carries none ([`route_an_open_edge`]).
    fn write(&self, path: &Path, value: Option<Value>) {
        let id = self.node.get_value();
        let path = path.clone();
        self.editor.change(|document| {
            let Some(node) = document.nodes.iter_mut().find(|node| node.id == id) else {
                return;
            };
            if !node.config.is_object() {
                node.config = Value::Object(Default::default());
            }
            let was = path::get(&node.config, &path)
                .and_then(Value::as_str)
                .map(str::to_string);
            let route_change = match &value {
                Some(Value::String(now)) if path::names_a_route(&path) => {
                    Some((was.unwrap_or_default(), now.clone()))
                }
                _ => None,
            };
            path::set(&mut node.config, &path, value);
            // A route renamed takes its edges along; one typed where there
            // was none goes to an edge that carries none.
            if let Some((was, now)) = route_change {
                if was.is_empty() {
                    route_an_open_edge(document, &id, &now);
                } else {
                    follow_route_rename(document, &id, &was, &now);
                }
            }
        });
    }

    /// The graph's channels, of type `only` when given (tracked).
    fn channels(&self, only: Option<ChannelType>) -> Vec<String> {
        self.editor.skeleton.with(|document| {
            document
                .state
                .channels
                .iter()
                .filter(|(_, channel)| only.is_none_or(|ty| channel.ty == ty))
                .map(|(name, _)| name.clone())
                .collect()
        })
    }

    /// The names a hint picks from (tracked).
    fn names(&self, hint: FieldHint) -> Vec<String> {
        match hint {
            FieldHint::Channel => self.channels(None),
            FieldHint::MessagesChannel => self.channels(Some(ChannelType::Messages)),
            FieldHint::Tool => self.choices.tools.get(),
            FieldHint::Model => self.choices.models.get(),
            FieldHint::Credential => self.choices.secrets.get(),
            FieldHint::Node => self.editor.nodes.with(|nodes| {
                nodes
                    .iter()
                    .map(|node| node.id.get_value().to_string())
                    .collect()
            }),
            FieldHint::Route => self.spec.with(|spec| {
                spec.config
                    .get("routes")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|route| route.get("route").and_then(Value::as_str))
                    .filter(|route| !route.is_empty())
                    .map(str::to_string)
                    .collect()
            }),
            FieldHint::Template | FieldHint::Expression | FieldHint::Script | FieldHint::Graph => {
                Vec::new()
            }
        }
    }

    /// The validator's problems at `path` of this node's config (tracked).
    fn problems_at(&self, path: &Path) -> Vec<Problem> {
        let id = self.node.get_value();
        let suffix = format!(".config{}", problem_path(path));
        self.problems.with(|all| {
            all.iter()
                .filter(|problem| problem.node.as_ref() == Some(&id))
                .filter(|problem| problem.path.ends_with(&suffix))
                .cloned()
                .collect()
        })
    }
}

/// A config path as validation writes it: `.routes[0].when`.
fn problem_path(path: &Path) -> String {
    path.iter()
        .map(|step| match step {
            Step::Key(key) => format!(".{key}"),
            Step::Index(i) => format!("[{i}]"),
        })
        .collect()
}

/// Works out every built-in kind's fields ahead, one kind per idle moment,
/// so that even the first form of a kind is drawn without reading its
/// schema (a few milliseconds of the frame that shows it).
pub fn prepare_forms() {
    fn from(i: usize) {
        if let Some(kind) = heddle_engine::kinds::BuiltinKind::ALL.get(i).copied() {
            when_idle(4.0, 10_000, move || {
                shape::kind_fields(kind);
                from(i + 1);
            });
        }
    }
    from(0);
}

/// The form for node `spec`, built from its kind's schema. Kinds the
/// editor has no schema for get the JSON view only.
#[component]
pub fn ConfigForm(
    editor: Editor,
    spec: RwSignal<NodeSpec>,
    problems: Memo<Vec<Problem>>,
    choices: Choices,
) -> impl IntoView {
    let kind = spec.with_untracked(|spec| spec.kind.clone());
    let cx = FormCx {
        editor,
        node: StoredValue::new(spec.with_untracked(|spec| spec.id.clone())),
        spec,
        problems,
        choices,
        read_only: !editor.can_edit,
    };
    let builtin = heddle_engine::kinds::BuiltinKind::from_name(&kind);
    let all = builtin.map(shape::kind_fields).unwrap_or_default();
    let (more, main): (Vec<Field>, Vec<Field>) = all
        .iter()
        .cloned()
        .partition(|field| builtin.is_some_and(|kind| field.folds_in(kind)));
    let more_count = more.len();
    let main = main
        .into_iter()
        .map(|field| widgets::field(cx, Vec::new(), field))
        .collect_view();
    let more = (more_count > 0).then(|| {
        // Open when one of its fields has a problem: a problem that says
        // "set `max_messages`" finds the field in sight.
        let keys: Vec<String> = more
            .iter()
            .map(|field| format!(".config.{}", field.key))
            .collect();
        let node = cx.node;
        let wanted = move || {
            problems.with(|problems| {
                node.with_value(|node| {
                    problems.iter().any(|problem| {
                        problem.node.as_ref() == Some(node)
                            && keys.iter().any(|key| {
                                problem.path.find(key.as_str()).is_some_and(|at| {
                                    let rest = &problem.path[at + key.len()..];
                                    rest.is_empty() || rest.starts_with(['.', '['])
                                })
                            })
                    })
                })
            })
        };
        let rows = more
            .into_iter()
            .map(|field| widgets::field(cx, Vec::new(), field))
            .collect_view();
        view! {
            <details class="form-more" open=wanted>
                <summary>{format!("More settings ({more_count})")}</summary>
                {rows}
            </details>
        }
    });
    view! {
        <div class="config-form">
            {main}
            {more}
            <details class="form-more form-advanced">
                <summary>"Advanced: the config as JSON"</summary>
                {widgets::json_config(cx)}
            </details>
        </div>
    }
}
